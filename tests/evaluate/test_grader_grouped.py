"""--grading grouped: all of a reply's LLM criteria in one call, stored beside per-criterion."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from medrealmm.evaluate import EvalSettings, load_scores, run_evaluation
from medrealmm.evaluate.provenance import load_specs
from medrealmm.schema import Verdict, VerdictStatus
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import demo_instances, fill_store
from .test_evaluate_agents import REPLY, is_grader, models_yaml, user_content

_ID = re.compile(r"- \[(c\d+)\]")


def grouped(body: dict[str, Any], *, leave_out: str | None = None) -> FakeReply:
    if not is_grader(body):
        return FakeReply(content=REPLY)
    text = json.dumps(user_content(body), ensure_ascii=False)
    ids = [i for i in _ID.findall(text) if i != leave_out]
    items = [{"id": i, "rationale": "r", "met": i == "c1"} for i in ids]
    return FakeReply(content=json.dumps({"verdicts": items}))


def test_one_call_per_reply_resumable_and_kept_beside_the_per_criterion_verdicts(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(grouped) as server, RunStore(tmp_path / "run") as store:
        fill_store(store, demo_instances(2))
        config = models_yaml(tmp_path, server)
        base = {"model": "fake-vlm", "grader": "fake-judge", "models_config": config}
        outcome = run_evaluation(store, EvalSettings(**base, grading="grouped"))
        assert len(server.requests) == 2 + 2  # two replies, one grader call each
        run_evaluation(store, EvalSettings(**base, grading="grouped"))
        assert len(server.requests) == 4  # a rerun asks nothing
        scores = load_scores(store, "fake-judge[grouped]")
        spec = load_specs(store)[outcome.eval_id]
        keys = store.keys(stages.EVAL_VERDICT)
    assert outcome.grader == "fake-judge[grouped]" and outcome.incomplete == 0
    assert spec.grading == "grouped" and spec.usage[stages.EVAL_VERDICT].calls == 2
    assert len(scores) == 2 and all(s.positive_met == 2 for s in scores)  # c1 and rule c4
    assert len(keys) == 2 * 4 and all(k.startswith("fake-judge[grouped]|") for k in keys)


def test_a_criterion_left_out_of_the_answer_fails_and_is_asked_alone_again(
    tmp_path: Path,
) -> None:
    with (
        FakeOpenAIServer(lambda b: grouped(b, leave_out="c2")) as server,
        RunStore(tmp_path / "run") as store,
    ):
        fill_store(store, demo_instances(1))
        config = models_yaml(tmp_path, server)
        settings = EvalSettings(
            model="fake-vlm", grader="fake-judge", models_config=config, grading="grouped"
        )
        (score,) = run_evaluation(store, settings).scores
        key = next(k for k in store.keys(stages.EVAL_VERDICT) if k.endswith("|c2"))
        missing = store.get(stages.EVAL_VERDICT, key, Verdict)
        assert missing is not None and missing.status is VerdictStatus.FAILED
        assert "no item for this criterion" in (missing.error or "")
        assert not score.complete and score.failed_criteria == ["c2"]
        assert score.abstained_criteria == []  # never an abstention
        server.responder = grouped
        retried = run_evaluation(store, EvalSettings(**{**settings.__dict__, "retry_failed": True}))
        last = json.dumps(user_content(server.requests[-1]), ensure_ascii=False)
    assert _ID.findall(last) == ["c2"]  # only the criterion still missing
    assert retried.incomplete == 0


def _either(body: dict[str, Any]) -> FakeReply:
    """Grouped requests get a list of verdicts, per-criterion ones a single verdict."""
    text = json.dumps(user_content(body), ensure_ascii=False) if is_grader(body) else ""
    if is_grader(body) and len(_ID.findall(text)) > 1:
        return grouped(body)
    if is_grader(body):
        return FakeReply(content=json.dumps({"rationale": "r", "met": True}))
    return FakeReply(content=REPLY)


def test_usage_is_recorded_and_shown_per_grading_mode(tmp_path: Path) -> None:
    """Grouped and per-criterion calls of one grader are two usage rows (they were summed),
    each counting its own calls as the server received them; `eval score` shows both names
    whole (rich would read `[grouped]` as markup)."""
    from typer.testing import CliRunner

    from medrealmm.cli import app

    with FakeOpenAIServer(_either) as server, RunStore(tmp_path / "run") as store:
        fill_store(store, demo_instances(2))
        config = models_yaml(tmp_path, server)
        base = {"model": "fake-vlm", "grader": "fake-judge", "models_config": config}
        run_evaluation(store, EvalSettings(**base))
        per_criterion = len(server.requests) - 2  # less the two replies
        run_evaluation(store, EvalSettings(**base, grading="grouped"))
        grouped_calls = len(server.requests) - 2 - per_criterion
        usage = {
            row["model"]: row["calls"]
            for row in store.usage()
            if row["stage"] == stages.EVAL_VERDICT
        }
    assert usage == {"fake-judge": per_criterion, "fake-judge[grouped]": grouped_calls}
    assert grouped_calls == 2 and per_criterion > grouped_calls
    shown = CliRunner().invoke(app, ["eval", "score", str(tmp_path / "run")])
    assert shown.exit_code == 0, shown.output
    assert "fake-judge[grouped]" in shown.output
