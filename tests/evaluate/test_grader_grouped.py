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
