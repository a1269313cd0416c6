from __future__ import annotations

import pytest

from medrealmm.evaluate import rubric_score, score_case, summarize_models
from medrealmm.schema import CaseScore, Criterion, Verdict, VerdictStatus


def test_score_is_positive_normalised_sum() -> None:
    # 5 + 8 met, -6 triggered, 3 missed: (5 + 8 - 6) / (5 + 8 + 3)
    assert rubric_score([(5, True), (8, True), (-6, True), (3, False)]) == pytest.approx(7 / 16)


def test_score_never_exceeds_one_and_ignores_untriggered_penalties() -> None:
    assert rubric_score([(5, True), (3, True), (-20, False)]) == 1.0


def test_negative_sum_is_clipped_to_zero() -> None:
    assert rubric_score([(2, True), (-20, True), (5, False)]) == 0.0


def test_all_negative_rubric_scores_one_when_nothing_is_triggered() -> None:
    assert rubric_score([(-5, False), (-3, False)]) == 1.0


def test_all_negative_rubric_scores_zero_when_any_penalty_is_triggered() -> None:
    assert rubric_score([(-5, False), (-3, True)]) == 0.0


def test_zero_positive_met_scores_zero() -> None:
    assert rubric_score([(4, False), (6, False), (-2, False)]) == 0.0


CRITERIA = [
    Criterion(id="a", text="甲", weight=5),
    Criterion(id="b", text="乙", weight=3),
    Criterion(id="n", text="丙", weight=-4),
]


def _verdict(cid: str, value: bool | None) -> Verdict:
    if value is None:
        return Verdict(criterion_id=cid, value=None, status=VerdictStatus.FAILED, error="bad")
    return Verdict(criterion_id=cid, value=value)


def _case(values: dict[str, bool | None], **kw: object) -> CaseScore:
    verdicts = {cid: _verdict(cid, v) for cid, v in values.items()}
    base: dict[str, object] = {"instance_id": "x", "model": "m", "images": True, "sample": 0}
    base.update(kw)
    return score_case(criteria=CRITERIA, verdicts=verdicts, **base)  # type: ignore[arg-type]


def test_case_score_reports_the_decomposition() -> None:
    case = _case({"a": True, "b": False, "n": True})
    assert case.complete and case.score == pytest.approx((5 - 4) / 8)
    assert (case.positive_met, case.negative_triggered) == (1, 1)
    assert (case.positive_points_met, case.positive_points_total) == (5, 8)


def test_failed_verdict_makes_the_case_incomplete_not_zero() -> None:
    case = _case({"a": True, "b": None, "n": False})
    assert not case.complete and case.score is None
    assert case.failed_criteria == ["b"]
    missing = _case({"a": True, "n": False})
    assert not missing.complete and missing.failed_criteria == ["b"]


def test_summary_worst_and_mean_of_k_skip_incomplete_instances() -> None:
    scores = [
        _case({"a": True, "b": True, "n": False}, instance_id="i1", sample=0),  # 1.0
        _case({"a": True, "b": False, "n": False}, instance_id="i1", sample=1),  # 0.625
        _case({"a": False, "b": True, "n": False}, instance_id="i2", sample=0),  # 0.375
        _case({"a": None, "b": True, "n": False}, instance_id="i2", sample=1),  # incomplete
    ]
    (row,) = summarize_models(scores, baselines={"m"})
    assert row.is_baseline and row.k == 2 and row.instances == 2
    assert row.score == pytest.approx((1.0 + 0.375) / 2)  # sample 0 of each instance
    assert row.mean_of_k == pytest.approx((1.0 + 0.625) / 2)  # only i1 has k complete
    assert row.worst_of_k == pytest.approx(0.625)
    assert (row.complete, row.incomplete) == (3, 1)
    assert row.incomplete_cases == ["i2#1"]


def test_summary_of_only_incomplete_cases_has_no_score() -> None:
    (row,) = summarize_models([_case({"a": None, "b": True, "n": False})])
    assert row.score is None and row.worst_of_k is None and row.incomplete == 1


def test_summary_flags_unapproved_rubrics() -> None:
    rows = summarize_models([_case({"a": True, "b": True, "n": False}, rubric_approved=False)])
    assert rows[0].unapproved_rubrics == 1


def test_positives_and_negatives_average_the_same_samples_as_the_score() -> None:
    scores = [
        _case({"a": True, "b": True, "n": False}, instance_id="i1", sample=0),  # +2 met
        _case({"a": False, "b": False, "n": True}, instance_id="i1", sample=1),  # 1 hit
    ]
    (row,) = summarize_models(scores)
    assert row.score == pytest.approx(1.0)
    assert row.positive_met_mean == 2.0 and row.negative_triggered_mean == 0.0


def test_instances_with_fewer_than_k_samples_do_not_count_toward_worst_of_k() -> None:
    scores = [
        _case({"a": True, "b": True, "n": False}, instance_id="i1", sample=0),  # 1.0
        _case({"a": True, "b": False, "n": False}, instance_id="i1", sample=1),  # 0.625
        _case({"a": False, "b": False, "n": False}, instance_id="i2", sample=0),  # 0.0, k short
    ]
    (row,) = summarize_models(scores, k={("m", True): 2})
    assert row.k == 2 and row.k_instances == 1
    assert row.worst_of_k == pytest.approx(0.625) and row.mean_of_k == pytest.approx(0.8125)
    (asked_three,) = summarize_models(scores, k={("m", True): 3})
    assert asked_three.k_instances == 0 and asked_three.worst_of_k is None
