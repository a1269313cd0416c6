"""What a score weighs: each case (challenge point) alike, or each consultation alike.

With several challenge points per consultation, a mean over cases lets a consultation with
more points weigh more. ``consultation`` weighting averages each consultation's cases first,
then the consultations (each weighs 1); its CI resamples consultations as the case
weighting's does.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum


class Weighting(StrEnum):
    CASE = "case"
    CONSULTATION = "consultation"

    @property
    def note(self) -> str:
        """How a table says which weighting it uses."""
        if self is Weighting.CONSULTATION:
            return "加权：每个问诊权重相同（先对问诊内各挑战点取均值）"
        return "加权：每个病例（挑战点）权重相同"


def weighted(
    values: Sequence[float], clusters: Sequence[str], weighting: Weighting
) -> tuple[list[float], list[str]]:
    """``values`` with their consultation labels as the weighting asks: unchanged for
    ``case``; for ``consultation`` one mean per consultation (in order of first appearance),
    each its own label."""
    if Weighting(weighting) is Weighting.CASE:
        return list(values), list(clusters)
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for value, label in zip(values, clusters, strict=True):
        sums[label] = sums.get(label, 0.0) + value
        counts[label] = counts.get(label, 0) + 1
    return [sums[label] / counts[label] for label in sums], list(sums)


def weighted_mean(
    scores: Sequence[float], clusters: Sequence[str], weighting: Weighting
) -> float | None:
    """The mean of ``scores`` as the weighting asks (None when there are none)."""
    values, _ = weighted(scores, clusters, weighting)
    return sum(values) / len(values) if values else None
