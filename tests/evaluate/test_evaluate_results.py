"""Provenance, stale rubrics and the one results layer that `eval score` and the report share."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm._version import __version__
from medrealmm.cli import app
from medrealmm.evaluate import EvalSettings, load_results, load_specs, run_evaluation
from medrealmm.llm import OFFLINE_NAME
from medrealmm.rubric.rounds import approve, evaluation_rubrics, save_round
from medrealmm.schema import CaseScore, Criterion, Response, Verdict
from medrealmm.stats.cases import PRIMARY_GRADER_META
from medrealmm.store import RunStore, stages

from .conftest import demo_instances, fill_store


def test_every_row_links_to_its_evaluation_and_rubric_version(eval_store: RunStore) -> None:
    outcome = run_evaluation(eval_store, EvalSettings(model="offline", k=2))
    specs = load_specs(eval_store)
    spec = specs[outcome.eval_id]
    assert spec.label == OFFLINE_NAME and spec.k == 2 and spec.images and spec.kind == "generated"
    assert spec.model is not None and spec.model.backend == "offline"
    assert spec.grader.name == OFFLINE_NAME
    assert {"respond.user.j2", "grader.user.j2"} <= set(spec.prompts)
    assert spec.benchmark.kind == "run" and spec.package_version == __version__
    assert spec.finished_at is not None and spec.finished_at >= spec.started_at
    assert spec.usage[stages.EVAL_RESPONSE].calls == 8  # 4 instances x k=2
    rubrics = evaluation_rubrics(eval_store)
    for score in eval_store.iter(stages.EVAL_SCORE, CaseScore):
        assert score.eval_id == outcome.eval_id
        assert score.rubric_version == rubrics[score.instance_id].version
    for verdict in eval_store.iter(stages.EVAL_VERDICT, Verdict):
        assert verdict.eval_id == outcome.eval_id and verdict.rubric_version
    responses = eval_store.iter(stages.EVAL_RESPONSE, Response)
    assert all(r.eval_id == outcome.eval_id for r in responses)
    assert eval_store.get_meta(PRIMARY_GRADER_META) == OFFLINE_NAME
    again = run_evaluation(eval_store, EvalSettings(model="offline", k=2))
    assert again.eval_id == outcome.eval_id  # a rerun continues the same evaluation


def _refine(store: RunStore, instance_id: str) -> None:
    """A physician changes one criterion's text and approves the new round."""
    current = evaluation_rubrics(store)[instance_id]
    criteria = [
        c.model_copy(update={"text": "建议到皮肤科门诊复诊并完善检查"}) if c.id == "c1" else c
        for c in current.criteria
    ]
    save_round(
        store,
        current.model_copy(update={"round": current.round + 1, "criteria": criteria}),
    )
    approve(store, instance_id, reviewer="dr_test")


def test_refined_rubric_makes_old_scores_stale_and_rerun_regrades_only_the_change(
    eval_store: RunStore, tmp_path: Path
) -> None:
    settings = EvalSettings(model="offline")
    run_evaluation(eval_store, settings)
    before = load_results(eval_store)
    assert not before.stale and len(before.records) == 4
    target = demo_instances(4)[1].id
    _refine(eval_store, target)

    stale = load_results(eval_store)
    assert [r.instance_id for r in stale.stale] == [target]
    assert target not in {r.instance_id for r in stale.records}  # never silently counted
    report = CliRunner().invoke(app, ["report", str(eval_store.path), str(tmp_path / "rep")])
    assert report.exit_code == 0, report.output
    assert "stale" in report.output
    assert "已排除的过期评分" in (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")

    calls = {u["stage"]: u["calls"] for u in eval_store.usage()}
    rerun = run_evaluation(eval_store, settings)
    after = {u["stage"]: u["calls"] for u in eval_store.usage()}
    assert rerun.verdicts.done == 1  # only the changed criterion is graded again
    assert after[stages.EVAL_VERDICT] - calls[stages.EVAL_VERDICT] == 1
    assert after[stages.EVAL_RESPONSE] == calls[stages.EVAL_RESPONSE]
    fresh = load_results(eval_store)
    assert not fresh.stale and len(fresh.records) == 4


def test_eval_score_and_report_print_identical_numbers(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore(run) as store:
        fill_store(store, demo_instances(6))
        run_evaluation(store, EvalSettings(model="offline", k=2))
        run_evaluation(store, EvalSettings(model="offline", images=False))
        run_evaluation(store, EvalSettings(model="online"))
    runner = CliRunner()
    scored = runner.invoke(app, ["eval", "score", str(run), "--json", str(tmp_path / "s.json")])
    assert scored.exit_code == 0, scored.output
    report = runner.invoke(app, ["report", str(run), str(tmp_path / "rep"), "--resamples", "50"])
    assert report.exit_code == 0, report.output
    cli = {
        (r["model"], r["images"]): r
        for r in json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["rows"]
    }
    table = json.loads((tmp_path / "rep" / "tables" / "overall.json").read_text(encoding="utf-8"))
    decomposition = json.loads(
        (tmp_path / "rep" / "tables" / "decomposition.json").read_text(encoding="utf-8")
    )
    parts = {(r["model"], r["images"]): r for r in decomposition["rows"]}
    assert len(table["rows"]) == len(cli) == 3
    for row in table["rows"]:
        mine = cli[(row["model"], row["images"])]
        assert f"{row['mean']:.1f}" == f"{100 * mine['score']:.1f}"
        assert row["k"] == mine["k"] and row["cases_at_k"] == mine["k_instances"]
        for ours, theirs in (("mean_at_k", "mean_of_k"), ("worst_at_k", "worst_of_k")):
            assert row[ours] == pytest.approx(100 * mine[theirs], abs=1e-3)
        part = parts[(row["model"], row["images"])]
        assert part["positive_met"] == pytest.approx(mine["positive_met_mean"], abs=1e-3)
        assert part["negative_triggered"] == pytest.approx(
            mine["negative_triggered_mean"], abs=1e-3
        )
    assert cli[(OFFLINE_NAME, True)]["k"] == 2


def test_criterion_version_ignores_tags_but_not_text() -> None:
    base = Criterion(id="c", text="询问病史", weight=5)
    assert base.version == base.model_copy(update={"tags": ["history"]}).version
    assert base.version != base.model_copy(update={"text": "询问用药史"}).version
    assert base.version != base.model_copy(update={"weight": 6}).version
