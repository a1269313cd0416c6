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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from medrealmm.stats.bootstrap import DEFAULT_RESAMPLES, bootstrap_statistic_cis

Item = tuple[str, str]  # (response key, criterion id)
Rater = tuple[str, str]  # (kind, name): a grader and a physician may share a name
ALL_PHYSICIANS = "全体医生"
ALL = "all"
#: confusion counts in this order: rater met & reference met, met & not, not & met, not & not
COUNTS = ("tp", "fp", "fn", "tn")


@dataclass(frozen=True, slots=True)
class ItemInfo:
    """What an item is stratified by: its case (the bootstrap unit), polarity and category.
    Slotted: a report holds one per labelled item."""

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


@dataclass(frozen=True)
class ItemArrays:
    """The labelled items as arrays (one entry per item, items in sorted order): the codes
    of each item's case (cases in sorted order: the bootstrap's units), polarity and
    category (each in sorted name order), and per rater which items it judged and how."""

    cases: np.ndarray  # int: index into sorted case ids
    case_count: int
    strata: dict[str, tuple[list[str], np.ndarray]]  # axis -> (sorted names, code per item)
    judged: dict[Rater, np.ndarray]  # bool per item
    met: dict[Rater, np.ndarray]  # bool per item (False where not judged)


def item_arrays(
    raters: Mapping[Rater, Mapping[Item, bool]], info: Mapping[Item, ItemInfo]
) -> ItemArrays:
    """``info``'s items and every rater's verdicts on them as arrays (verdicts on items
    ``info`` lacks are left out, as ``meta_evaluate`` leaves them out)."""
    items = sorted(info)
    index = {item: i for i, item in enumerate(items)}
    details = [info[item] for item in items]
    case_names = sorted({d.case for d in details})
    case_code = {name: i for i, name in enumerate(case_names)}
    strata = {}
    for axis in ("polarity", "category"):
        values = [getattr(d, axis) for d in details]
        names = sorted(set(values))
        code = {name: i for i, name in enumerate(names)}
        strata[axis] = (names, np.array([code[v] for v in values], dtype=np.int64))
    judged, met = {}, {}
    for name, verdicts in raters.items():
        count = len(verdicts)
        at = np.fromiter(map(index.get, verdicts, repeat(-1, count)), dtype=np.int64, count=count)
        known = at >= 0
        has = np.zeros(len(items), dtype=bool)
        value = np.zeros(len(items), dtype=bool)
        has[at[known]] = True
        value[at[known]] = np.fromiter(verdicts.values(), dtype=bool, count=count)[known]
        judged[name], met[name] = has, value
    cases = np.array([case_code[d.case] for d in details], dtype=np.int64)
    return ItemArrays(cases, len(case_names), strata, judged, met)


#: A rater's strata: the axis, then per stratum its name and code on that axis (ALL: one, 0).
Strata = list[tuple[str, str, int]]


def _pair_cells(arrays: ItemArrays, rater: Rater, reference: Rater) -> dict[str, np.ndarray]:
    """Per axis (ALL included, as one stratum), per stratum and case, the (COUNTS) confusion
    counts of ``rater`` against ``reference`` on the items both judged: one bincount an axis
    for every stratum at once."""
    shared = arrays.judged[rater] & arrays.judged[reference]
    mine, theirs = arrays.met[rater][shared], arrays.met[reference][shared]
    code = np.where(mine, np.where(theirs, 0, 1), np.where(theirs, 2, 3))
    cell = arrays.cases[shared] * 4 + code
    size = arrays.case_count * 4
    # int32: a rater's pairs are held together, and counts are small
    found = {ALL: np.bincount(cell, minlength=size).astype(np.int32).reshape(1, -1, 4)}
    for axis, (names, codes) in arrays.strata.items():
        at = codes[shared] * size + cell
        counts = np.bincount(at, minlength=len(names) * size).astype(np.int32)
        found[axis] = counts.reshape(len(names), -1, 4)
    return found


def _items(arrays: ItemArrays, paired: np.ndarray) -> dict[str, np.ndarray]:
    """Per axis (ALL included) and stratum, how many of the ``paired`` items it holds."""
    found = {ALL: np.array([int(paired.sum())])}
    for axis, (names, codes) in arrays.strata.items():
        found[axis] = np.bincount(codes[paired], minlength=len(names))
    return found


def _rater_strata(arrays: ItemArrays, own: np.ndarray) -> Strata:
    strata = [(ALL, ALL, 0)]
    for axis, (names, codes) in arrays.strata.items():
        strata += [(axis, names[c], int(c)) for c in np.unique(codes[own])]
    return strata


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
    count (the caller leaves out code-checked rules and stale labels).

    Counted on arrays (``item_arrays``): each pair of raters once for all its strata, a
    pooled row as the sum of its physicians'; every row's case bootstrap in one batched pass."""
    arrays = item_arrays(
        {
            **{("grader", name): v for name, v in graders.items()},
            **{("physician", name): v for name, v in physicians.items()},
        },
        info,
    )
    raters = [(name, "grader") for name in sorted(graders)]
    raters += [(name, "physician") for name in sorted(physicians)]
    heads: list[tuple[str, str, str, str, str, int, int]] = []
    units: list[np.ndarray] = []
    for name, kind in raters:
        own = arrays.judged[(kind, name)]
        others = [("physician", p) for p in sorted(physicians) if p != name]
        cells = {other: _pair_cells(arrays, (kind, name), other) for other in others}
        references = [(ALL_PHYSICIANS, others), *((p[1], [p]) for p in others)]
        strata = _rater_strata(arrays, own)
        for reference, labels in references:
            if not labels:
                continue
            counted = {
                axis: sum(cells[label][axis] for label in labels) for axis in cells[labels[0]]
            }
            items = _items(arrays, own & np.logical_or.reduce([arrays.judged[r] for r in labels]))
            for axis, stratum, code in strata:
                counts = counted[axis][code]
                pairs = int(counts.sum())
                if not pairs:
                    continue
                heads.append((name, kind, reference, axis, stratum, pairs, int(items[axis][code])))
                units.append(counts[counts.sum(axis=1) > 0])
    intervals = bootstrap_statistic_cis(units, balanced_f1, seed=seed, resamples=resamples)
    rows = []
    for head, counts, interval in zip(heads, units, intervals, strict=True):
        name, kind, reference, axis, stratum, pairs, items = head
        total = counts.sum(axis=0)
        scores = {k: v.item() for k, v in class_scores(total).items()}
        rows.append(
            MetaRow(
                rater=name,
                kind=kind,
                reference=reference,
                axis=axis,
                stratum=stratum,
                items=items,
                pairs=pairs,
                cases=len(counts),
                **{k: _float(v) for k, v in scores.items()},
                balanced_f1=_float(balanced_f1(total)),
                f1_low=_float(interval.low),
                f1_high=_float(interval.high),
            )
        )
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
