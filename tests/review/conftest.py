from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from fastapi.testclient import TestClient

from medrealmm.corpus import ReviewConfig
from medrealmm.corpus import review as review_queue
from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.io import iter_jsonl
from medrealmm.report.webfont import CACHE_ENV
from medrealmm.review import Role, accounts, create_app, create_user
from medrealmm.schema import Consultation, Criterion, Instance, Response, Rubric
from medrealmm.store import RunStore, stages

PASSWORD = "correct horse battery"
USERS = {
    "admin1": Role.ADMIN,
    "doc1": Role.PHYSICIAN,
    "doc2": Role.PHYSICIAN,
    "rev1": Role.REVIEWER,
    "rev2": Role.REVIEWER,
}
CASE_ID = "demo-000"
RESPONSE = Response(
    instance_id="demo-000-t4", model="org/model-x", text="考虑足癣，建议外用抗真菌药。"
)
RESPONSE_KEY = stages.response_key(RESPONSE.model, True, RESPONSE.instance_id, 0)


def demo_consultation() -> Consultation:
    for consultation in iter_jsonl(bundled_corpus_dir() / CORPUS_FILE, Consultation):
        if consultation.id == CASE_ID:
            return consultation
    raise AssertionError("demo case missing")


def masked(consultation: Consultation) -> Consultation:
    """What de-identification would hand the reviewers: the name replaced by [NAME]."""
    events = [
        e.model_copy(update={"content": e.content.replace("朱秀英", "[NAME]")})
        for e in consultation.events
    ]
    return consultation.model_copy(update={"events": events})


def demo_instance(consultation: Consultation) -> Instance:
    context = consultation.events[:5]
    return Instance(
        id=f"{consultation.id}-t4",
        consultation_id=consultation.id,
        department=consultation.department,
        t_star=4,
        context=context,
        target_reply=consultation.events[5].content,
    )


def demo_rubric(instance_id: str, round_: int = 0) -> Rubric:
    return Rubric(
        instance_id=instance_id,
        round=round_,
        criteria=[
            Criterion(id="c1", text="指出足癣（脚气）为最可能诊断", weight=8),
            Criterion(id="c2", text="建议外用抗真菌药并说明疗程和日常护理", weight=8),
            Criterion(id="c3", text="编造患者未提供的检查结果", weight=-10),
        ],
    )


def seed(store: RunStore) -> None:
    consultation = demo_consultation()
    store.put(stages.CORPUS_SAMPLED, CASE_ID, consultation)
    store.put(stages.CORPUS_DEID, CASE_ID, masked(consultation))
    store.set_meta(stages.image_root_key(stages.CORPUS_DEID), str(bundled_corpus_dir()))
    review_queue.enqueue(store, ReviewConfig(), stages.CORPUS_DEID)
    instance = demo_instance(masked(consultation))
    store.put(stages.MCCP_INSTANCE, instance.id, instance)
    store.set_meta(stages.image_root_key(stages.MCCP_INSTANCE), str(bundled_corpus_dir()))
    store.put(stages.RUBRIC_ROUND, f"{instance.id}#00", demo_rubric(instance.id))
    store.put(stages.EVAL_RESPONSE, RESPONSE_KEY, RESPONSE)
    db = store.connection()
    for username, role in USERS.items():
        create_user(db, username, PASSWORD, frozenset({role}))


def csrf_of(html: str) -> str:
    marker = 'name="csrf_token" value="'
    start = html.index(marker) + len(marker)
    return html[start : html.index('"', start)]


def login(client: TestClient, username: str, password: str = PASSWORD) -> str:
    """Log in through the form; returns the session's CSRF token."""
    page = client.get("/login")
    response = client.post(
        "/login",
        data={"username": username, "password": password, "csrf_token": csrf_of(page.text)},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text
    return csrf_of(client.get("/").text)


@pytest.fixture(autouse=True, scope="session")
def cheap_password_hashing() -> Iterator[None]:
    """Real argon2id, with parameters small enough for a shared test machine."""
    with pytest.MonkeyPatch.context() as patch:
        cheap = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
        patch.setattr(accounts, "PASSWORD_HASHER", cheap)
        yield


@pytest.fixture(autouse=True, scope="session")
def font_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A browser fetching the app's CJK font cuts it once per session, never under HOME."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("font-cache")))
        yield


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[RunStore]:
    with RunStore(tmp_path / "run") as run_store:
        seed(run_store)
        yield run_store


@pytest.fixture()
def client(store: RunStore) -> Iterator[TestClient]:
    with TestClient(create_app(store), base_url="http://127.0.0.1") as test_client:
        yield test_client
