"""Few-shot calibration: balanced examples, a split by case, and the before/after figure."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate.calibration import (
    Example,
    calibrated_request,
    evaluate_calibration,
    select_examples,
    split_cases,
)
from medrealmm.evaluate.grader import grader_request
from medrealmm.schema import Criterion
from medrealmm.store import RunStore
from medrealmm.testing import FakeOpenAIServer, FakeReply
from medrealmm.testing.synthetic_store import build_synthetic_store


def example(case: str, category: str, met: bool, polarity: str = "positive") -> Example:
    weight = 5 if polarity == "positive" else -5
    return Example(case, category, polarity, f"准则{case}{met}", weight, "回复", met)


def test_split_is_by_case_seeded_and_never_empty_on_either_side() -> None:
    cases = [f"case-{i}" for i in range(9)]
    first, second = split_cases(cases, seed=3)
    assert first | second == set(cases) and not first & second and len(first) in (4, 5)
    assert split_cases(reversed(cases), seed=3) == (first, second)
    assert split_cases(cases, seed=4) != (first, second)
    assert all(split_cases(["a", "b"], share=s)[0] for s in (0.0, 1.0))


@pytest.mark.parametrize("seed", range(8))
def test_split_keeps_every_consultation_on_one_side(seed: int) -> None:
    """Several challenge points of one dialogue: all examples or all held out, never both
    (checked case by case against the consultations), and about ``share`` of the
    consultations on the calibration side."""
    rng = random.Random(seed)
    of = {f"c{c}-t{t}": f"c{c}" for c in range(12) for t in range(rng.randint(1, 4))}
    calibration, held_out = split_cases(of, share=0.5, seed=seed)
    assert calibration | held_out == set(of) and not calibration & held_out
    for case in calibration:
        for other in held_out:
            assert of[case] != of[other]
    assert len({of[c] for c in calibration}) == 6


def test_examples_are_balanced_of_the_same_sign_and_category_first() -> None:
    pool = [
        example("a", "报告解读", True),
        example("b", "报告解读", True),
        example("c", "报告解读", True),
        example("d", "用药咨询", False),
        example("e", "报告解读", False),
        example("f", "报告解读", False, "negative"),
        example("g", "报告解读", False),
    ]
    chosen = select_examples(pool, category="报告解读", polarity="positive", exclude_case="g")
    assert sum(e.met for e in chosen) == sum(not e.met for e in chosen) == 2
    assert all(e.polarity == "positive" and e.case != "g" for e in chosen)
    assert {e.case for e in chosen if not e.met} == {"e", "d"}  # own category, then another
    only_met = select_examples(pool[:3], category="报告解读", polarity="positive")
    assert only_met == []  # no "not met" example: none at all rather than a lopsided set


def test_the_examples_block_renders_nothing_when_empty() -> None:
    criterion = Criterion(id="c1", text="给出诊断", weight=5)
    plain = grader_request(
        department="皮肤科", context=[], parts=[], criterion=criterion, reply="考虑湿疹"
    )
    empty = calibrated_request(
        department="皮肤科", parts=[], criterion=criterion, reply="考虑湿疹", examples=[]
    )
    assert empty.messages == plain.messages
    shown = calibrated_request(
        department="皮肤科",
        parts=[],
        criterion=criterion,
        reply="考虑湿疹",
        examples=[example("a", "x", True), example("b", "x", False)],
    )
    text = shown.messages[-1].plain_text
    assert "参考判例" in text and '{"met": true}' in text and '{"met": false}' in text


def _store(tmp_path: Path) -> Path:
    return build_synthetic_store(tmp_path / "run", cases=12)


def test_offline_grader_reads_no_examples_so_before_equals_after(tmp_path: Path) -> None:
    with RunStore(_store(tmp_path)) as store:
        result = evaluate_calibration(store, resamples=50)
    head = {r.rater: r for r in result.rows if r.reference == "全体医生" and r.axis == "all"}
    plain, shot = head["offline-baseline"], head["offline-baseline + examples"]
    assert plain.balanced_f1 == shot.balanced_f1 and plain.items == shot.items > 0
    assert result.calibration_cases + result.held_out_cases == 12 and result.failed == 0
    assert plain.cases == result.held_out_cases  # judged on held-out cases only


def test_a_model_that_reads_the_examples_is_measured_on_held_out_cases(tmp_path: Path) -> None:
    """A fake grader that answers "met" unless shown examples: the two columns differ."""

    def grader(body: dict[str, Any]) -> FakeReply:
        text = json.dumps(body["messages"], ensure_ascii=False)
        return FakeReply(content=json.dumps({"rationale": "", "met": "参考判例" not in text}))

    run = _store(tmp_path)
    with FakeOpenAIServer(grader) as server:
        config = tmp_path / "models.yaml"
        entry = {"name": "judge", "model": "judge", "base_url": server.base_url}
        config.write_text(yaml.safe_dump({"models": [entry]}), encoding="utf-8")
        args = ["eval", "meta", str(run), "--calibrate", "--grader", "judge"]
        result = CliRunner().invoke(
            app, [*args, "--models-config", str(config), "--resamples", "50"]
        )
        sent = len(server.requests)
    assert result.exit_code == 0, result.output
    assert "Calibration: judge" in " ".join(result.output.split())
    assert sent > 0
    with RunStore(run) as store:
        again = evaluate_calibration(store, grader="judge", models_config=config, resamples=50)
    head = {r.rater: r for r in again.rows if r.reference == "全体医生" and r.axis == "all"}
    assert head["judge"].f1_met is not None
    plain, shot = head["judge"], head["judge + examples"]
    # always "met" without examples: no "not met" class, so no balanced F1 (as simple-evals)
    assert plain.f1_not_met is None and plain.balanced_f1 is None
    assert (plain.f1_met, plain.f1_not_met) != (shot.f1_met, shot.f1_not_met)
