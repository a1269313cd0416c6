"""Judge panels: several graders on one run, one derived verdict, resumable, with agreement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate import EvalSettings, run_evaluation
from medrealmm.evaluate.panel import Panel, decide, load_panels, panel_from_graders, panel_verdict
from medrealmm.evaluate.provenance import load_specs
from medrealmm.evaluate.results import load_results, panel_summary
from medrealmm.io import DataError
from medrealmm.report.grader_tables import grader_tables
from medrealmm.schema import Criterion, Verdict, VerdictStatus
from medrealmm.store import RunStore, stages
from medrealmm.store.stages import PRIMARY_GRADER_META
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import demo_instances, fill_store
from .test_evaluate_agents import REPLY, is_grader

POSITIVE = Criterion(id="p", text="询问病史", weight=5)
NEGATIVE = Criterion(id="n", text="建议自行停药", weight=-5)


def vote(value: bool | None, status: VerdictStatus = VerdictStatus.OK) -> Verdict:
    if status is not VerdictStatus.OK:
        value = None
    return Verdict(criterion_id="p", value=value, status=status)


def test_ties_go_to_the_score_minimising_verdict() -> None:
    majority = Panel("majority", ("a", "b"))
    split = {"a": True, "b": False}
    assert decide(majority, POSITIVE.weight, split) is False  # not met: no points
    assert decide(majority, NEGATIVE.weight, split) is True  # met: the penalty applies
    weighted = Panel("weighted", ("a", "b", "c"), {"a": 2.0})
    assert decide(weighted, 5, {"a": True, "b": False, "c": False}) is False  # 2 vs 2: a tie
    assert decide(weighted, 5, {"a": True, "b": False}) is True  # 2 vs 1
    assert decide(Panel("unanimous", ("a", "b")), 5, split) is False
    assert decide(Panel("any", ("a", "b")), 5, split) is True
    three = Panel("majority", ("a", "b", "c"))
    assert decide(three, -5, {"a": False, "b": False, "c": True}) is False


def test_abstainers_do_not_vote_and_failures_decide_nothing() -> None:
    panel = Panel("majority", ("a", "b", "c"))
    abstained = vote(None, VerdictStatus.ABSTAINED)
    found = panel_verdict(panel, POSITIVE, {"a": vote(True), "b": abstained, "c": vote(True)})
    assert found is not None and found.value is True and found.grader == panel.name
    nobody = panel_verdict(panel, POSITIVE, {"a": abstained, "b": abstained, "c": abstained})
    assert nobody is not None and nobody.status is VerdictStatus.ABSTAINED
    failed = vote(None, VerdictStatus.FAILED)
    assert panel_verdict(panel, POSITIVE, {"a": vote(True), "b": failed, "c": vote(True)}) is None
    assert panel_verdict(panel, POSITIVE, {"a": vote(True), "c": vote(True)}) is None


def test_panels_from_the_command_line_and_the_models_yaml(tmp_path: Path) -> None:
    assert panel_from_graders(["m1"], None, None) == ("m1", None)
    single, panel = panel_from_graders(["m1", "m2"], None, None)
    assert single is None and panel is not None and panel.method == "majority"
    assert panel.name == "panel-majority(m1,m2)"
    config = tmp_path / "models.yaml"
    entry = {"name": "trio", "graders": ["m1", "m2", "m3"], "method": "weighted"}
    config.write_text(yaml.safe_dump({"panels": [{**entry, "weights": {"m1": 2}}]}), "utf-8")
    single, panel = panel_from_graders(["trio"], None, config)
    assert panel is not None and panel.name == "trio" and panel.weight("m1") == 2.0
    config.write_text(yaml.safe_dump({"panels": [entry, {"name": "x", "graders": ["m1"]}]}))
    with pytest.raises(DataError, match=r"models.yaml:2: field 'panels'.*two graders"):
        load_panels(config)
    with pytest.raises(ValueError, match="two or more"):
        panel_from_graders(["m1"], "majority", None)


def split_judges(body: dict[str, Any]) -> FakeReply:
    """judge-a says met, judge-b says not met, judge-c cannot assess: every vote a tie."""
    if not is_grader(body):
        return FakeReply(content=REPLY)
    answer = {
        "judge-a": {"met": True},
        "judge-b": {"met": False},
        "judge-c": {"met": True, "cannot_assess": True},
    }[body["model"]]
    return FakeReply(content=json.dumps({"rationale": "r", **answer}))


def three_judges(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    entries = [{"name": "fake-vlm", "model": "fake-vlm", "base_url": server.base_url}]
    for name in ("judge-a", "judge-b", "judge-c"):
        entries.append({"name": name, "model": name, "base_url": server.base_url})
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": entries}), encoding="utf-8")
    return path


def test_a_panel_run_resumes_with_no_repeated_call_and_derives_its_verdict(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(split_judges) as server, RunStore(tmp_path / "run") as store:
        fill_store(store, demo_instances(2))
        config = three_judges(tmp_path, server)
        _, panel = panel_from_graders(["judge-a", "judge-b", "judge-c"], None, config)
        settings = EvalSettings(model="fake-vlm", models_config=config, panel=panel)
        outcome = run_evaluation(store, settings)
        calls = len(server.requests)
        # 2 replies + 3 judges x 2 replies x 3 LLM criteria (c4 is a rule)
        assert calls == 2 + 3 * 2 * 3
        again = run_evaluation(store, settings)
        assert len(server.requests) == calls  # nothing asked twice
        assert [s.score for s in again.scores] == [s.score for s in outcome.scores]
        assert panel is not None
        assert store.get_meta(PRIMARY_GRADER_META) == panel.name
        derived = store.get(stages.EVAL_VERDICT, next(iter(_keys(store, panel.name))), Verdict)
        results = load_results(store)
        summary = panel_summary(store, results)
        specs = load_specs(store)
        tables = {t.name: t for t in grader_tables(store, results)}
    assert outcome.grader == panel.name and [m.grader for m in outcome.members] == list(
        panel.members
    )
    # a (met) vs b (not met), c abstains: a tie, so c1/c2 are not met and c3 (-6) is met;
    # c4 is a rule, checked in code alike by every member.
    for score in outcome.scores:
        assert score.complete and score.positive_met == 1 and score.negative_triggered == 1
    assert derived is not None and "judge-c: cannot assess" in derived.rationale
    assert specs[outcome.eval_id].panel is not None
    assert specs[outcome.eval_id].usage[stages.EVAL_VERDICT].calls == 18
    assert summary is not None and [m.calls for m in summary.members] == [6, 6, 6]
    overall = summary.agreement[0]
    assert overall.subset == "all" and overall.items == 6
    # a and b never agree; c never votes
    assert overall.pairs[0][:3] == ("judge-a", "judge-b", 6)
    assert overall.pairs[1][2] == 0
    # the report's tables: judge-c's abstentions (every LLM criterion), members, agreement
    counts = {row["grader"]: row["abstained"] for row in tables["abstentions"].rows}
    assert counts == {"judge-a": 0, "judge-b": 0, "judge-c": 6, panel.name: 0}
    assert [row["calls"] for row in tables["panel_members"].rows] == [6, 6, 6]
    assert {row["criteria"] for row in tables["panel_agreement"].rows} == {
        "all",
        "positive",
        "negative",
    }


def _keys(store: RunStore, rater: str) -> list[str]:
    return sorted(k for k in store.keys(stages.EVAL_VERDICT) if k.startswith(rater + "|"))


def test_eval_run_cli_takes_a_panel_and_eval_score_shows_it(tmp_path: Path) -> None:
    runner = CliRunner()
    with FakeOpenAIServer(split_judges) as server:
        run = tmp_path / "run"
        with RunStore(run) as store:
            fill_store(store, demo_instances(1))
        config = three_judges(tmp_path, server)
        args = ["eval", "run", str(run), "--model", "fake-vlm", "--models-config", str(config)]
        panel = ["--grader", "judge-a", "--grader", "judge-b", "--panel", "unanimous"]
        result = runner.invoke(app, [*args, *panel])
        assert result.exit_code == 0, result.output
        assert "panel member judge-b" in result.output
        score = runner.invoke(app, ["eval", "score", str(run), "--json", str(tmp_path / "s.json")])
    assert score.exit_code == 0, score.output
    assert "Judge panel panel-unanimous(judge-a,judge-b)" in score.output
    assert "alpha" in score.output
    payload = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert payload["panel"]["method"] == "unanimous"
    assert {m["grader"]: m["calls"] for m in payload["panel"]["members"]} == {
        "judge-a": 3,
        "judge-b": 3,
    }


def test_eval_run_help_documents_abstain_panels_and_grading() -> None:
    result = CliRunner().invoke(app, ["eval", "run", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for option in ("--abstain", "--panel", "--grading", "unanimous", "grouped", "incomplete"):
        assert option in result.output, option
    assert "score-minimising" in result.output
