"""Two physicians give feedback on one rubric round while the Refiner is still working on the
first's: both are kept, each item naming who gave it; approving the round meanwhile is refused
naming the physician whose feedback waits; the refined round is made from every item."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from argon2 import PasswordHasher

from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.io import iter_jsonl
from medrealmm.review import ReviewSettings, Role, accounts, create_app, create_user
from medrealmm.rubric import RoundFeedback
from medrealmm.rubric import stage as rubric_stage
from medrealmm.schema import Consultation, Criterion, Instance, Rubric
from medrealmm.store import RunStore, stages
from medrealmm.testing.asgi import serve_in_thread

PASSWORD = "correct horse battery"
INSTANCE = "demo-000-t4"


def _seed(store: RunStore) -> None:
    case = next(iter_jsonl(bundled_corpus_dir() / CORPUS_FILE, Consultation))
    instance = Instance(
        id=INSTANCE,
        consultation_id=case.id,
        department=case.department,
        t_star=4,
        context=case.events[:5],
        target_reply=case.events[5].content,
    )
    store.put(stages.MCCP_INSTANCE, instance.id, instance)
    store.set_meta(stages.image_root_key(stages.MCCP_INSTANCE), str(bundled_corpus_dir()))
    criteria = [
        Criterion(id="c1", text="指出最可能的诊断", weight=8),
        Criterion(id="c2", text="给出处理建议并说明疗程", weight=6),
    ]
    store.put(
        stages.RUBRIC_ROUND, f"{INSTANCE}#00", Rubric(instance_id=INSTANCE, criteria=criteria)
    )
    for name in ("doc1", "doc2"):
        create_user(store.connection(), name, PASSWORD, frozenset({Role.PHYSICIAN}))


class SlowRefiner:
    """The real Refiner (offline baseline), held at a gate once it has read the feedback."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.seen: list[RoundFeedback] = []
        real = rubric_stage.refine_rubric

        async def slow(
            client: object,
            instance: object,
            current: object,
            feedback: RoundFeedback,
            *args: object,
            **kwargs: object,
        ) -> object:
            self.seen.append(feedback)
            self.entered.set()
            while not self.gate.is_set():
                await asyncio.sleep(0.02)
            return await real(client, instance, current, feedback, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(rubric_stage, "refine_rubric", slow)


def _csrf(html: str) -> str:
    marker = 'name="csrf_token" value="'
    start = html.index(marker) + len(marker)
    return html[start : html.index('"', start)]


def _physician(base: str, name: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(base_url=base, timeout=30)
    page = client.get("/login")
    form = {"username": name, "password": PASSWORD, "csrf_token": _csrf(page.text)}
    assert client.post("/login", data=form).status_code in (200, 303)
    return client, _csrf(client.get("/").text)


def _feedback(client: httpx.Client, csrf: str, text: str) -> httpx.Response:
    form = {
        "csrf_token": csrf,
        "round": "0",
        "new:1:type": "missing_criterion",
        "new:1:text": text,
        "new:1:weight": "5",
    }
    return client.post(f"/rubric/{INSTANCE}/feedback", data=form)


@pytest.fixture()
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    monkeypatch.setattr(accounts, "PASSWORD_HASHER", PasswordHasher(1, 1024, 1))
    run = tmp_path / "run"
    with RunStore(run) as store:
        _seed(store)
        with serve_in_thread(create_app(store, ReviewSettings())) as base:
            yield base, run


def _wait(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_two_physicians_and_a_slow_refiner_lose_nothing(
    served: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, run = served
    refiner = SlowRefiner(monkeypatch)
    first, first_csrf = _physician(base, "doc1")
    second, second_csrf = _physician(base, "doc2")
    with contextlib.closing(first), contextlib.closing(second):
        assert _feedback(first, first_csrf, "询问足部渗液情况").status_code == 303  # saved
        _wait(refiner.entered.is_set, "the Refiner to start on doc1's feedback")
        assert _feedback(second, second_csrf, "提醒糖尿病患者尽早就医").status_code == 303
        approval = second.post(
            f"/rubric/{INSTANCE}/approve", data={"csrf_token": second_csrf, "round": "0"}
        )
        refiner.gate.set()
        with RunStore(run) as store:
            assert store.count(stages.RUBRIC_FINAL) == 0  # the approval closed nothing
            assert "doc1" in approval.text
            _wait(lambda: store.count(stages.RUBRIC_ROUND) == 2, "the refined round")
            kept = store.get(stages.RUBRIC_FEEDBACK, f"{INSTANCE}#00", RoundFeedback)
    assert kept is not None
    assert [(i.reviewer, i.text) for i in kept.items] == [
        ("doc1", "询问足部渗液情况"),
        ("doc2", "提醒糖尿病患者尽早就医"),
    ]
    assert all(item.submitted_at is not None for item in kept.items)
    # the round was refined from both physicians' items, not from the first alone
    assert len(refiner.seen[-1].items) == 2


def test_feedback_items_append_and_a_reimport_repeats_none(served: tuple[str, Path]) -> None:
    from medrealmm.rubric import FeedbackItem, save_feedback

    _, run = served
    item = FeedbackItem(type="missing_criterion", text="询问用药史", weight=4)
    with RunStore(run) as store:
        for _ in range(2):  # the same submission twice (a re-import)
            save_feedback(
                store, RoundFeedback(instance_id=INSTANCE, round=0, reviewer="doc1", items=[item])
            )
        other = item.model_copy(update={"text": "询问过敏史"})
        save_feedback(
            store, RoundFeedback(instance_id=INSTANCE, round=0, reviewer="doc2", items=[other])
        )
        kept = store.get(stages.RUBRIC_FEEDBACK, f"{INSTANCE}#00", RoundFeedback)
    assert kept is not None
    assert [(i.reviewer, i.text) for i in kept.items] == [
        ("doc1", "询问用药史"),
        ("doc2", "询问过敏史"),
    ]


def test_a_store_transaction_commits_its_writes_together(tmp_path: Path) -> None:
    """``RunStore.transaction``: nested writes (a row, a cache write) commit with it, or not
    at all when it fails."""
    from medrealmm.schema import Response

    reply = Response(instance_id="i1", model="m", text="好")
    with RunStore(tmp_path / "run") as store:
        with pytest.raises(RuntimeError), store.transaction():
            store.put(stages.EVAL_RESPONSE, "a", reply)
            store.write_soon("INSERT INTO meta(key, value) VALUES ('x', '1')", ())
            raise RuntimeError("undo")
        assert store.count(stages.EVAL_RESPONSE) == 0 and store.get_meta("x") is None
        with store.transaction():
            store.put(stages.EVAL_RESPONSE, "a", reply)
            store.put(stages.EVAL_RESPONSE, "b", reply)
        assert store.count(stages.EVAL_RESPONSE) == 2
