"""Working through the de-identification queue: readable titles, filters, paging, what is
left, and save-and-next from one task to the next."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest
from fastapi.testclient import TestClient

from medrealmm.corpus import ReviewConfig
from medrealmm.corpus import review as review_queue
from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.io import iter_jsonl
from medrealmm.review import create_app, create_user
from medrealmm.review.accounts import Role
from medrealmm.review.deid_queue import PAGE_SIZE
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages

from .conftest import (
    PASSWORD,
    RESPONSE_KEY,
    demo_consultation,
    demo_instance,
    demo_rubric,
    login,
    masked,
)

CASES = 15  # 30 primary tasks: two pages


def seed_queue(store: RunStore, cases: int = CASES) -> list[Consultation]:
    found = list(iter_jsonl(bundled_corpus_dir() / CORPUS_FILE, Consultation))[:cases]
    for consultation in found:
        store.put(stages.CORPUS_DEID, consultation.id, consultation)
    store.set_meta(stages.image_root_key(stages.CORPUS_DEID), str(bundled_corpus_dir()))
    review_queue.enqueue(store, ReviewConfig(), stages.CORPUS_DEID)
    for username in ("rev1", "rev2"):
        create_user(store.connection(), username, PASSWORD, frozenset({Role.REVIEWER}))
    return found


@pytest.fixture()
def queue_client(tmp_path: Path) -> Iterator[tuple[TestClient, RunStore, str]]:
    with RunStore(tmp_path / "run") as store:
        seed_queue(store)
        with TestClient(create_app(store), base_url="http://127.0.0.1") as client:
            yield client, store, login(client, "rev1")


def task_links(html: str) -> list[str]:
    """The task keys of the queue's rows, in order."""
    marker = 'data-task="'
    return [
        html[i + len(marker) : html.index('"', i + len(marker))]
        for i in range(len(html))
        if html.startswith(marker, i)
    ]


def test_queue_shows_titles_progress_and_pages(
    queue_client: tuple[TestClient, RunStore, str],
) -> None:
    client, store, _ = queue_client
    total = len(review_queue.tasks(store))
    first = client.get("/deid").text
    assert f'剩余 <strong data-left="{total}">{total}</strong> / {total}' in first
    assert "皮肤科 · 15 轮 · 4 图 · 残留隐私初审" in first  # demo-000, not its raw key
    assert ">demo-000|pii|primary<" not in first
    assert len(set(task_links(first))) == PAGE_SIZE
    assert "第 1 / 2 页" in first
    second = client.get("/deid?page=2").text
    assert len(set(task_links(second))) == total - PAGE_SIZE
    assert not set(task_links(first)) & set(task_links(second))


def test_filters_by_pass_department_status_and_mine(
    queue_client: tuple[TestClient, RunStore, str],
) -> None:
    client, _, csrf = queue_client
    utility = task_links(client.get("/deid?pass=utility").text)
    assert utility and all(key.endswith("|utility|primary") for key in utility)
    skin = client.get("/deid?department=皮肤科").text
    assert "内分泌科 ·" not in skin and "皮肤科 ·" in skin
    key = "demo-001|pii|primary"
    client.post(f"/deid/{key}", data={"csrf_token": csrf, "verdict": "approve"})
    assert task_links(client.get("/deid?mine=1").text) == [key]
    assert key not in task_links(client.get("/deid?status=open").text)
    assert task_links(client.get("/deid?status=decided").text) == [key]


def test_save_and_next_goes_to_the_next_open_task(
    queue_client: tuple[TestClient, RunStore, str],
) -> None:
    client, store, csrf = queue_client
    total = len(review_queue.tasks(store))
    url = "/deid/demo-000|pii|primary"
    page = client.get(url).text
    assert "保存并下一项" in page and 'data-key="n"' in page and "快捷键" in page
    done = client.post(
        url,
        data={"csrf_token": csrf, "verdict": "approve", "then": "next"},
        follow_redirects=False,
    )
    assert done.status_code == 303
    following = unquote(done.headers["location"])
    assert following.startswith("http://127.0.0.1/deid/demo-000|utility|primary")
    assert f'剩余 <strong data-left="{total - 1}">' in client.get(following).text
    back = client.post(
        "/deid/demo-000|utility|primary",
        data={"csrf_token": csrf, "verdict": "approve", "then": "queue"},
        follow_redirects=False,
    )
    assert back.headers["location"].startswith("http://127.0.0.1/deid?")


def test_every_queue_shows_what_is_left_and_task_pages_save_and_next(
    client: TestClient, store: RunStore
) -> None:
    csrf = login(client, "doc1")
    client.post("/mccp", data={"csrf_token": csrf, "n": "1"})
    for queue in ("/mccp", "/rubric", "/panel"):
        assert 'class="progress"' in client.get(queue).text, queue
    for task_page in ("/mccp/demo-000-t4", f"/panel/{RESPONSE_KEY}"):
        html = client.get(task_page).text
        assert 'class="progress"' in html and 'data-key="n"' in html and "快捷键" in html
    done = client.post(
        "/mccp/demo-000-t4",
        data={"csrf_token": csrf, "decision": "accept", "then": "next"},
        follow_redirects=False,
    )
    assert done.headers["location"].startswith("http://127.0.0.1/mccp?")  # nothing left
    assert 'data-left="0"' in client.get("/mccp").text


def test_rubric_page_shows_what_is_left_and_links_back(client: TestClient) -> None:
    login(client, "doc1")
    html = client.get("/rubric/demo-000-t4").text
    assert 'data-left="1"' in html and 'data-key="q"' in html and "快捷键" in html


def test_rubric_save_and_next_goes_to_the_next_rubric_awaiting_review(
    client: TestClient, store: RunStore
) -> None:
    other = demo_instance(masked(demo_consultation())).model_copy(update={"id": "demo-000-t6"})
    store.put(stages.MCCP_INSTANCE, other.id, other)
    store.put(stages.RUBRIC_ROUND, f"{other.id}#00", demo_rubric(other.id))
    csrf = login(client, "doc1")
    html = client.get("/rubric/demo-000-t4").text
    for shortcut in ('data-key="n"', 'data-key="a"', 'data-key="e"', 'data-key="j"'):
        assert shortcut in html, shortcut
    assert "提交反馈并下一份" in html and "批准并下一份" in html and "快捷键" in html
    feedback = {"csrf_token": csrf, "round": "0", "weight:c1": "10", "then": "next"}
    done = client.post("/rubric/demo-000-t4/feedback", data=feedback, follow_redirects=False)
    assert done.status_code == 303
    assert done.headers["location"] == "http://127.0.0.1/rubric/demo-000-t6?notice=saved"
    # the Refiner wrote demo-000-t4's round 1 meanwhile: approving t6 goes back to it
    approve = {"csrf_token": csrf, "round": "0", "then": "next"}
    done = client.post("/rubric/demo-000-t6/approve", data=approve, follow_redirects=False)
    assert done.headers["location"] == "http://127.0.0.1/rubric/demo-000-t4?notice=saved"
    approve = {"csrf_token": csrf, "round": "1", "then": "next"}
    done = client.post("/rubric/demo-000-t4/approve", data=approve, follow_redirects=False)
    assert done.headers["location"] == "http://127.0.0.1/rubric?notice=saved"  # none left
    plain = {"csrf_token": csrf, "round": "0", "then": "stay"}
    stay = client.post("/rubric/demo-000-t6/approve", data=plain, follow_redirects=False)
    assert stay.headers["location"] == "http://127.0.0.1/rubric/demo-000-t6?notice=saved"
