"""`eval run --dry-run` says what a run would call and cost, and calls and writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate import EvalSettings, run_evaluation
from medrealmm.evaluate.dryrun import plan_evaluation
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import demo_instances, fill_store


def _reply(body: dict[str, Any]) -> FakeReply:
    if body["model"] == "judge":
        return FakeReply(content='{"rationale": "符合", "met": true}')
    return FakeReply(content="您好，建议外用药膏。")


def _config(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    models = [
        {"name": "m", "model": "m", "base_url": server.base_url, "price_per_mtok_in": 2.0},
        {"name": "judge", "model": "judge", "base_url": server.base_url},
    ]
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": models}), encoding="utf-8")
    return path


def test_dry_run_makes_no_calls_writes_nothing_and_prices_the_plan(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with RunStore(run_dir) as store:
        fill_store(store, demo_instances(2))
        before = store.stages()
    with FakeOpenAIServer(_reply) as server:
        args = ["eval", "run", str(run_dir), "--model", "m", "--grader", "judge", "--dry-run"]
        config = _config(tmp_path, server)
        result = CliRunner().invoke(app, [*args, "--models-config", str(config)])
        assert server.requests == []
    assert result.exit_code == 0, result.output
    assert "dry run for m:" in result.output and "dry run for judge:" in result.output
    assert "units already done (resumed, no calls): 0" in result.output
    with RunStore(run_dir) as store:
        assert store.stages() == before and store.usage() == []


def test_dry_run_counts_stored_calls_as_done(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run") as store, FakeOpenAIServer(_reply) as server:
        fill_store(store, demo_instances(2))
        settings = EvalSettings(
            model="m", grader="judge", models_config=_config(tmp_path, server), limit=1
        )
        (respond, grade), resumed = plan_evaluation(store, settings)
        assert resumed == 0 and sum(t.to_call for t in respond.plan.values()) == 1
        (respond_task,) = respond.plan.values()
        assert respond_task.prompt_tokens > 0 and respond_task.cost(respond.spec) is not None
        graded = sum(t.to_call for t in grade.plan.values())
        assert graded > 0 and all(t.cost(grade.spec) is None for t in grade.plan.values())
        run_evaluation(store, settings)
        calls = len(server.requests)
        (respond, grade), resumed = plan_evaluation(store, settings)
        assert len(server.requests) == calls
        assert store.keys(stages.EVAL_RESPONSE)  # the real run wrote; the plans did not
    assert resumed == 1 + graded
    assert sum(t.to_call for c in (respond, grade) for t in c.plan.values()) == 0
