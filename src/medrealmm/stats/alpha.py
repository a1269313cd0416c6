"""Krippendorff's alpha (nominal) for several raters with missing verdicts, and a judge panel's
agreement over criterion verdicts: alpha across all graders beside each pair's AC1.

Alpha takes any number of raters and lets each item miss some (a grader that could not
assess, or failed), which pairwise AC1 does not; both are shown, split by criterion polarity
as Table 2 splits them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, permutations

from medrealmm.stats.agreement import agreement

SUBSETS = ("all", "positive", "negative")


def krippendorff_alpha(units: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Nominal alpha = 1 - D_o / D_e over ``units`` (one row of rater values per item, None
    where a rater gave none). Items with fewer than two values are not pairable and left out.
    None when it is undefined: fewer than two pairable values, or one value throughout."""
    coincidences: Counter[tuple[Hashable, Hashable]] = Counter()
    for unit in units:
        values = [v for v in unit if v is not None]
        if len(values) < 2:
            continue
        share = 1.0 / (len(values) - 1)
        for a, b in permutations(values, 2):
            coincidences[(a, b)] += share
    totals: Counter[Hashable] = Counter()
    for (a, _), count in coincidences.items():
        totals[a] += count
    n = sum(totals.values())
    if n < 2:
        return None
    expected = sum(totals[a] * totals[b] for a in totals for b in totals if a != b)
    if expected == 0:
        return None
    observed = sum(count for (a, b), count in coincidences.items() if a != b)
    return 1.0 - (n - 1) * observed / expected


@dataclass(frozen=True)
class PanelAgreement:
    """One polarity subset of a panel's criterion verdicts: alpha over every grader, then
    each pair's AC1 on the items both judged."""

    subset: str
    items: int
    alpha: float | None
    pairs: tuple[tuple[str, str, int, float | None], ...]  # (a, b, n, AC1)


def panel_agreement(
    verdicts: Mapping[str, Mapping[Hashable, bool]], weights: Mapping[Hashable, int]
) -> list[PanelAgreement]:
    """``verdicts``: grader -> item -> value (abstained and failed items absent);
    ``weights``: item -> criterion weight, which picks the polarity."""
    raters = list(verdicts)
    rows = []
    for subset in SUBSETS:
        items = [
            item
            for item, weight in weights.items()
            if subset == "all" or (weight > 0) == (subset == "positive")
        ]
        units = [[verdicts[r].get(item) for r in raters] for item in items]
        pairs = []
        for a, b in combinations(raters, 2):
            both = [i for i in items if i in verdicts[a] and i in verdicts[b]]
            ac1 = (
                agreement([verdicts[a][i] for i in both], [verdicts[b][i] for i in both]).ac1
                if both
                else None
            )
            pairs.append((a, b, len(both), ac1))
        rows.append(PanelAgreement(subset, len(items), krippendorff_alpha(units), tuple(pairs)))
    return rows
