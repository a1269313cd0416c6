"""Meta-evaluation: how closely a grader judges criteria as physicians do.

After simple-evals' HealthBench meta-evaluation: each item is (reply, one criterion) with
several physicians' met / not-met labels. A rater (an LLM grader, or a physician) is compared
with each physician in turn; precision, recall and F1 are taken for "met" and for "not met",
and their mean, the balanced F1, is the headline (it does not reward saying "met" to a rubric
that is mostly met). Each physician is scored the same way against the other physicians, which
gives the spread a grader should fall inside. Confidence intervals resample cases (all of a
case's items together), since one case's criteria are not independent.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from medrealmm.stats.bootstrap import DEFAULT_RESAMPLES, bootstrap_statistic_ci

Item = tuple[str, str]  # (response key, criterion id)
ALL_PHYSICIANS = "全体医生"
ALL = "all"
#: confusion counts in this order: rater met & reference met, met & not, not & met, not & not
COUNTS = ("tp", "fp", "fn", "tn")


@dataclass(frozen=True)
class ItemInfo:
    """What an item is stratified by: its case (the bootstrap unit), polarity and category."""

    case: str
    polarity: str  # positive | negative (the weight's sign)
    category: str


@dataclass(frozen=True)
class MetaRow:
    rater: str
    kind: str  # grader | physician
    reference: str  # one physician, or ALL_PHYSICIANS (every physician but the rater)
    axis: str  # all | polarity | category
    stratum: str
    items: int  # distinct items compared
    pairs: int  # (item, reference physician) pairs
    cases: int
    precision_met: float | None
    recall_met: float | None
    f1_met: float | None
    precision_not_met: float | None
    recall_not_met: float | None
    f1_not_met: float | None
    balanced_f1: float | None
    f1_low: float | None
    f1_high: float | None


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, and 0 where den is 0 (scikit-learn's ``zero_division=0``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)


def class_scores(counts: np.ndarray) -> dict[str, np.ndarray]:
    """Precision, recall and F1 per class from confusion counts (``COUNTS`` on the last axis).

    A class neither side ever used has no F1 (NaN): two raters who agree that nothing is met
    are not penalised for the "met" class they never saw. Otherwise 0/0 is 0, as in
    scikit-learn with ``zero_division=0``.
    """
    tp, fp, fn, tn = (counts[..., i].astype(float) for i in range(4))
    met_seen = (tp + fp + fn) > 0
    not_seen = (tn + fn + fp) > 0
    return {
        "precision_met": _ratio(tp, tp + fp),
        "recall_met": _ratio(tp, tp + fn),
        "f1_met": np.where(met_seen, _ratio(2 * tp, 2 * tp + fp + fn), np.nan),
        "precision_not_met": _ratio(tn, tn + fn),
        "recall_not_met": _ratio(tn, tn + fp),
        "f1_not_met": np.where(not_seen, _ratio(2 * tn, 2 * tn + fn + fp), np.nan),
    }


def balanced_f1(counts: np.ndarray) -> np.ndarray:
    """Mean of the two classes' F1 (of the one that was seen, when only one was)."""
    scores = class_scores(counts)
    pair = np.stack([scores["f1_met"], scores["f1_not_met"]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # both classes unseen: NaN, no row
        return np.nanmean(pair, axis=0)


def confusion(rater: Sequence[bool], reference: Sequence[bool]) -> np.ndarray:
    a = np.asarray(rater, dtype=bool)
    b = np.asarray(reference, dtype=bool)
    return np.array([(a & b).sum(), (a & ~b).sum(), (~a & b).sum(), (~a & ~b).sum()])


def _float(value: np.ndarray | float) -> float | None:
    value = float(value)
    return None if np.isnan(value) else round(value, 4)


def _pairs(
    rater: Mapping[Item, bool], references: Mapping[str, Mapping[Item, bool]], items: set[Item]
) -> list[tuple[Item, bool, bool]]:
    return [
        (item, rater[item], labels[item])
        for labels in references.values()
        for item in items & rater.keys() & labels.keys()  # counted only: any order
    ]


def _row(
    rater: str,
    kind: str,
    reference: str,
    axis: str,
    stratum: str,
    pairs: list[tuple[Item, bool, bool]],
    info: Mapping[Item, ItemInfo],
    *,
    seed: int,
    resamples: int,
) -> MetaRow | None:
    if not pairs:
        return None
    per_case: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for item, mine, theirs in pairs:  # COUNTS order: tp, fp, fn, tn
        per_case[info[item].case][(0 if theirs else 1) if mine else (2 if theirs else 3)] += 1
    units = np.array([per_case[c] for c in sorted(per_case)], dtype=np.int64)
    total = units.sum(axis=0)
    scores = {k: v.item() for k, v in class_scores(total).items()}
    interval = bootstrap_statistic_ci(units, balanced_f1, seed=seed, resamples=resamples)
    return MetaRow(
        rater=rater,
        kind=kind,
        reference=reference,
        axis=axis,
        stratum=stratum,
        items=len({item for item, _, _ in pairs}),
        pairs=len(pairs),
        cases=len(per_case),
        **{k: _float(v) for k, v in scores.items()},
        balanced_f1=_float(balanced_f1(total)),
        f1_low=_float(interval.low),
        f1_high=_float(interval.high),
    )


def _strata(info: Mapping[Item, ItemInfo], items: set[Item]) -> list[tuple[str, str, set[Item]]]:
    out: list[tuple[str, str, set[Item]]] = [(ALL, ALL, set(items))]
    for axis in ("polarity", "category"):
        groups: dict[str, set[Item]] = defaultdict(set)
        for item in items:
            groups[getattr(info[item], axis)].add(item)
        out += [(axis, name, groups[name]) for name in sorted(groups)]
    return out


def meta_evaluate(
    graders: Mapping[str, Mapping[Item, bool]],
    physicians: Mapping[str, Mapping[Item, bool]],
    info: Mapping[Item, ItemInfo],
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> list[MetaRow]:
    """Every grader, then every physician, against all physicians pooled (the headline,
    each of the rater's items paired with every other physician's label of it) and against
    each physician alone; overall, by polarity and by category. Only items in ``info``
    count (the caller leaves out code-checked rules and stale labels)."""
    known = set(info)
    raters = [(name, "grader", v) for name, v in sorted(graders.items())]
    raters += [(name, "physician", v) for name, v in sorted(physicians.items())]
    rows: list[MetaRow] = []
    for name, kind, verdicts in raters:
        others = {p: labels for p, labels in physicians.items() if p != name}
        references = [(ALL_PHYSICIANS, others), *((p, {p: others[p]}) for p in sorted(others))]
        for reference, labels in references:
            for axis, stratum, items in _strata(info, known & verdicts.keys()):
                row = _row(
                    name,
                    kind,
                    reference,
                    axis,
                    stratum,
                    _pairs(verdicts, labels, items),
                    info,
                    seed=seed,
                    resamples=resamples,
                )
                if row is not None:
                    rows.append(row)
    return rows


def physician_spread(rows: Sequence[MetaRow]) -> tuple[float, float] | None:
    """Lowest and highest headline balanced F1 among physicians (each against the others)."""
    values = [
        r.balanced_f1
        for r in rows
        if r.kind == "physician"
        and r.reference == ALL_PHYSICIANS
        and r.axis == ALL
        and r.balanced_f1 is not None
    ]
    return (min(values), max(values)) if values else None
