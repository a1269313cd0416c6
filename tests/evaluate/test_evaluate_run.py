"""Offline end to end: every demo instance scored for the baseline and the online reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate import (
    ONLINE,
    EvalSettings,
    baseline_models,
    load_scores,
    run_evaluation,
    summarize_models,
)
from medrealmm.llm import OFFLINE_NAME
from medrealmm.schema import Response
from medrealmm.store import RunStore, stages

from .conftest import demo_instances, fill_store


def test_offline_scores_every_instance_for_baseline_and_online(tmp_path: Path) -> None:
    instances = demo_instances()
    assert len(instances) >= 30
    with RunStore(tmp_path / "run") as store:
        fill_store(store, instances)
        for settings in (
            EvalSettings(model="offline", images=True),
            EvalSettings(model="offline", images=False),
            EvalSettings(model=ONLINE),
        ):
            run_evaluation(store, settings)
        scores = load_scores(store, OFFLINE_NAME)
        rows = {
            (r.model, r.images): r
            for r in summarize_models(scores, baselines=baseline_models(store))
        }
        usage = store.usage()
    assert set(rows) == {(OFFLINE_NAME, True), (OFFLINE_NAME, False), (ONLINE, True)}
    for row in rows.values():
        assert row.instances == len(instances) and row.incomplete == 0
        assert row.score is not None and 0.0 <= row.score <= 1.0
        assert row.unapproved_rubrics == len(instances) - 1  # only the first has a final rubric
    assert rows[(OFFLINE_NAME, True)].is_baseline and not rows[(ONLINE, True)].is_baseline
    # the rubric is built from the online reply, so it must beat the rule-based baseline
    assert rows[(ONLINE, True)].score > rows[(OFFLINE_NAME, True)].score  # type: ignore[operator]
    assert {u["stage"] for u in usage} == {stages.EVAL_RESPONSE, stages.EVAL_VERDICT}


def test_rerun_repeats_no_call_and_keeps_scores(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run") as store:
        fill_store(store, demo_instances(3))
        first = run_evaluation(store, EvalSettings(model="offline"))
        cache_size = len(store.cache)
        calls = sum(u["calls"] for u in store.usage())
        second = run_evaluation(store, EvalSettings(model="offline"))
        assert len(store.cache) == cache_size
        assert sum(u["calls"] for u in store.usage()) == calls  # nothing asked again
    assert second.responses.done == 0 and second.verdicts.done == 0
    assert second.responses.skipped == 3 and second.verdicts.skipped == 12
    assert [s.score for s in first.scores] == [s.score for s in second.scores]


def test_instances_without_rubric_are_reported_not_scored(tmp_path: Path) -> None:
    instances = demo_instances(3)
    with RunStore(tmp_path / "run") as store:
        fill_store(store, instances[:2])
        store.put(stages.MCCP_INSTANCE, instances[2].id, instances[2])
        outcome = run_evaluation(store, EvalSettings(model=ONLINE))
    assert outcome.cases == 2 and outcome.no_rubric == [instances[2].id]


def test_online_row_is_the_original_reply(eval_store: RunStore) -> None:
    run_evaluation(eval_store, EvalSettings(model=ONLINE, images=False, k=3))
    responses = list(eval_store.iter(stages.EVAL_RESPONSE, Response))
    assert len(responses) == 4 and all(r.model == ONLINE and r.images for r in responses)
    assert eval_store.usage() == [
        u for u in eval_store.usage() if u["stage"] == stages.EVAL_VERDICT
    ]  # no respondent calls for the online row


def test_missing_image_root_is_a_clear_error(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run") as store:
        fill_store(store, demo_instances(1))
        store.set_meta(stages.image_root_key(stages.MCCP_INSTANCE), None)
        try:
            run_evaluation(store, EvalSettings(model="offline"))
        except ValueError as exc:
            assert "image root" in str(exc)
        else:
            raise AssertionError("expected a ValueError")
        text_only = run_evaluation(
            store, EvalSettings(model="offline", images=False, grader_images=False)
        )
    assert text_only.incomplete == 0


def test_a_dry_run_missing_the_image_root_fails_as_the_run_would(tmp_path: Path) -> None:
    from medrealmm.evaluate.dryrun import plan_evaluation

    with RunStore(tmp_path / "run") as store:
        fill_store(store, demo_instances(1))
        store.set_meta(stages.image_root_key(stages.MCCP_INSTANCE), None)
        with pytest.raises(ValueError, match="image root"):
            plan_evaluation(store, EvalSettings(model="offline"))  # never text-only in silence


def test_cli_run_and_score(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with RunStore(run_dir) as store:
        fill_store(store, demo_instances(3))
    runner = CliRunner()
    for args in (
        ["--model", "offline", "--images", "on", "--k", "2"],
        ["--model", "offline", "--images", "off"],
        ["--model", "online"],
    ):
        result = runner.invoke(app, ["eval", "run", str(run_dir), *args])
        assert result.exit_code == 0, result.output
    out = tmp_path / "scores.json"
    score = ["eval", "score", str(run_dir), "--grader", "offline", "--json", str(out)]
    result = runner.invoke(app, score)
    assert result.exit_code == 0, result.output
    assert "offline-baseline*" in result.output and "online" in result.output
    assert "Evaluations" in result.output and "eval-" in result.output  # provenance shown
    payload = json.loads(out.read_text(encoding="utf-8"))
    rows = {(r["model"], r["images"]): r for r in payload["rows"]}
    assert rows[(OFFLINE_NAME, True)]["k"] == 2
    assert rows[(OFFLINE_NAME, True)]["worst_of_k"] is not None
    assert payload["usage"]
    kinds = sorted(e["kind"] for e in payload["evaluations"])
    assert kinds == ["generated", "generated", "online"]
    assert "worst@k" in payload["definitions"]


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "score", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "no run store" in result.output
    assert not (tmp_path / "empty").exists()  # reading scores creates nothing
    with RunStore(tmp_path / "bare"):
        pass
    result = CliRunner().invoke(app, ["eval", "score", str(tmp_path / "bare")])
    assert result.exit_code == 2 and "no scores" in result.output


def test_run_demo_evaluates_instances_that_have_rubrics(tmp_path: Path) -> None:
    from medrealmm.pipeline import run_demo

    prefilled = demo_instances(3)
    with RunStore(tmp_path / "demo") as store:
        fill_store(store, prefilled)
    summary = run_demo(tmp_path / "demo")
    line = next(s for s in summary if s.startswith("evaluate"))
    assert "online" in line and "offline-baseline img" in line
    with RunStore(tmp_path / "demo") as store:
        replied = {r.instance_id for r in store.iter(stages.EVAL_RESPONSE, Response)}
    assert {i.id for i in prefilled} <= replied
