"""Scores by axis: pinned to a loop over criteria (HealthBench's rule: an axis's criteria
alone, a case without a positive criterion on it not counted); untagged rubrics read as
``untagged``; the baseline Generator tags every criterion; the axis leaves versions alone."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from medrealmm.report.axes import AXES, axis_scores
from medrealmm.report.build import write_report
from medrealmm.rubric.baseline import baseline_criteria
from medrealmm.rubric.rounds import CriterionDigest
from medrealmm.schema import Criterion, CriterionKind
from medrealmm.schema.rubric import UNTAGGED, Axis
from medrealmm.store import RunStore
from medrealmm.testing.synthetic_store import build_synthetic_store


def _brute(criteria: list[CriterionDigest], verdicts: dict[str, bool | None]) -> dict:
    found = {}
    for axis in AXES:
        mine = [c for c in criteria if (c.axis or UNTAGGED) == axis]
        positive = sum(c.weight for c in mine if c.weight > 0)
        if positive == 0:
            continue
        earned = sum(c.weight for c in mine if verdicts.get(c.id) is True)
        found[axis] = min(max(earned / positive, 0.0), 1.0)
    return found


@pytest.mark.parametrize("seed", range(30))
def test_axis_scores_equal_a_loop_over_criteria(seed: int) -> None:
    rng = random.Random(seed)
    criteria = [
        CriterionDigest(
            f"c{i}",
            rng.choice([w for w in range(-10, 11) if w]),
            CriterionKind.LLM,
            (),
            rng.choice([*(a.value for a in Axis), None]),
        )
        for i in range(rng.randint(1, 8))
    ]
    verdicts = {c.id: rng.choice([True, False, None]) for c in criteria}
    assert axis_scores(criteria, verdicts) == pytest.approx(_brute(criteria, verdicts))


def test_the_baseline_generator_tags_every_criterion_with_an_axis() -> None:
    drafts = baseline_criteria("考虑湿疹。建议外用药膏，每日两次。如加重请及时就医。", 2)
    assert drafts and all(d.axis in set(Axis) for d in drafts)
    assert {d.axis for d in drafts} >= {Axis.ACCURACY, Axis.CONTEXT_AWARENESS}


def test_an_axis_leaves_the_criterion_version_alone() -> None:
    old = Criterion.model_validate({"id": "c1", "text": "询问病史", "weight": 5})
    assert old.axis is None
    tagged = old.model_copy(update={"axis": Axis.COMPLETENESS})
    assert tagged.version == old.version


def test_report_breaks_scores_down_by_axis_and_untagged_is_the_whole_score(
    tmp_path: Path,
) -> None:
    """The synthetic rubrics carry no axis: every criterion is untagged, so the untagged
    score of a complete case is its Score (no abstentions there)."""
    run = build_synthetic_store(tmp_path / "run", cases=10)
    with RunStore(run) as store:
        write_report(store, tmp_path / "rep", resamples=20)
    tables = tmp_path / "rep" / "tables"
    axes = json.loads((tables / "by_axis.json").read_text("utf-8"))
    overall = {
        (r["model"], r["images"]): r
        for r in json.loads((tables / "overall.json").read_text("utf-8"))["rows"]
    }
    assert axes["rows"] and {r["axis"] for r in axes["rows"]} == {UNTAGGED}
    for row in axes["rows"]:
        whole = overall[(row["model"], row["images"])]
        assert row["cases"] == whole["cases"]
        assert row["mean"] == pytest.approx(whole["mean"], abs=1e-3)
    assert "评分维度" in (tmp_path / "rep" / "index.html").read_text("utf-8")
