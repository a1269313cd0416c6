"""The rubric score of paper 3.4: S = clip(sum_j w_j v_j / sum_j max(w_j, 0), 0, 1).

The formula lives here, below evaluation, so evaluation (which scores grader verdicts) and the
statistics (which also score the physician panel's verdicts) share it without importing each
other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rubric_score(weighted: Sequence[tuple[int, bool]]) -> float:
    """The clipped, positive-normalised score of (weight, verdict) pairs.

    A rubric with no positive weight only lists errors to avoid: 0/0 is defined as 1.0 when
    nothing is triggered, and any triggered penalty gives 0.0 (what clipping gives anyway).
    """
    positive_total = sum(max(weight, 0) for weight, _ in weighted)
    earned = sum(weight for weight, met in weighted if met)
    return score_of(earned, positive_total)


def score_of(earned: int, positive_total: int) -> float:
    """``rubric_score`` from its two sums: the weight earned and the positive weight."""
    if positive_total == 0:
        return 1.0 if earned == 0 else 0.0
    return min(max(earned / positive_total, 0.0), 1.0)


def complete_rubric_score(weights: Mapping[str, int], verdicts: Mapping[str, bool]) -> float | None:
    """S for one response by criterion id, or None unless every criterion has a verdict.

    Used for raters whose verdicts evaluation does not score, such as the physician panel.
    """
    if not weights or set(weights) - set(verdicts):
        return None
    return rubric_score([(weight, verdicts[cid]) for cid, weight in weights.items()])
