"""The app's Refiner runs through the configured model: feedback reaches a real
OpenAI-compatible client, a failing model is recorded as a failed round (retry offered), and
kicks that arrive mid-pass are coalesced into one more pass."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("medrealmm.rubric", reason="medrealmm.rubric lands separately")
from fastapi.testclient import TestClient

from medrealmm.review import ReviewSettings, create_app, refining
from medrealmm.rubric import RubricSettings, RubricState, round_history, state_of
from medrealmm.runner import RunStats
from medrealmm.store import RunStore
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import CASE_ID, login

INSTANCE_ID = f"{CASE_ID}-t4"


def test_feedback_reaches_the_configured_model_and_failure_is_data(
    store: RunStore, tmp_path: Path, fake_openai: FakeOpenAIServer
) -> None:
    config = tmp_path / "models.yaml"
    config.write_text(
        "models:\n"
        "  - name: refiner-x\n"
        "    model: refiner-x\n"
        f"    base_url: {fake_openai.base_url}\n"
        "    api_key_env: MEDREALMM_TEST_KEY\n"
        "    max_attempts: 1\n",
        encoding="utf-8",
    )
    fake_openai.responder = lambda body: FakeReply(content="这不是 JSON")
    settings = ReviewSettings(model="refiner-x", models_config=config)
    with (
        pytest.MonkeyPatch.context() as patch,
        TestClient(create_app(store, settings), base_url="http://127.0.0.1") as client,
    ):
        patch.setenv("MEDREALMM_TEST_KEY", "test")
        csrf = login(client, "doc1")
        form = {
            "csrf_token": csrf,
            "round": "0",
            "new:1:type": "unsafe_omission",
            "new:1:text": "提醒糖尿病患者足部感染风险需尽早就医",
            "new:1:weight": "6",
        }
        page = client.post(f"/rubric/{INSTANCE_ID}/feedback", data=form)
    assert page.status_code == 200
    prompts = [str(body["messages"]) for body in fake_openai.requests]
    assert prompts and all("提醒糖尿病患者足部感染风险需尽早就医" in p for p in prompts)
    assert len(fake_openai.requests) >= 2  # the malformed reply was shown back and retried
    assert [r.round for r in round_history(store, INSTANCE_ID)] == [0]
    assert state_of(store, INSTANCE_ID, RubricSettings()) is RubricState.FAILED
    assert "重新运行 Refiner" in page.text


def test_kicks_during_a_pass_coalesce_into_one_more_pass(
    store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    passes: list[int] = []
    release = asyncio.Event()

    async def slow_refine_all(*args: object, **kwargs: object) -> RunStats:
        passes.append(len(passes))
        if len(passes) == 1:
            await release.wait()
        return RunStats()

    monkeypatch.setattr(refining, "refine_all", slow_refine_all)
    worker = refining.RefineWorker(store, ReviewSettings())

    async def scenario() -> None:
        first = asyncio.create_task(worker.kick())
        await asyncio.sleep(0)
        await asyncio.gather(worker.kick(), worker.kick())  # arrive while pass 1 runs
        release.set()
        await first

    asyncio.run(scenario())
    assert passes == [0, 1]
