"""Meta-evaluation: how closely a grader judges criteria as physicians do.

After simple-evals' HealthBench meta-evaluation: each item is (reply, one criterion) with
several physicians' met / not-met labels. A rater (an LLM grader, or a physician) is compared
with each physician in turn; precision, recall and F1 are taken for "met" and for "not met",
and their mean, the balanced F1, is the headline (it does not reward saying "met" to a rubric
that is mostly met). Each physician is scored the same way against the other physicians, which
gives the spread a grader should fall inside. Confidence intervals resample consultations
(all of a consultation's items together, over all its challenge points), since one case's
criteria are not independent, nor are the cases cut from one dialogue.

A class is scored as simple-evals' ``healthbench_meta_eval.py`` scores it: its precision is
undefined where the rater never gave that label, its recall where the reference never did,
its F1 where either is undefined (0 where both are 0), and the balanced F1 only where both
classes' F1 are defined. An undefined figure is empty (NaN here, None in a row, "—" shown).
"""

from __future__ import annotations

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
    """What an item is stratified by: its case, polarity and category, and the consultation
    the case was cut from (the bootstrap unit; the case itself where empty). Slotted: a
    report holds one per labelled item."""

    case: str
    polarity: str  # positive | negative (the weight's sign)
    category: str
    consultation: str = ""

    @property
    def unit(self) -> str:
        return self.consultation or self.case


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
    consultations: int  # the bootstrap's units
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
    """num / den, and NaN (undefined) where den is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    """F1 of one class: NaN where its precision (tp + fp = 0) or recall (tp + fn = 0) is
    undefined, as simple-evals leaves it; else 2tp / (2tp + fp + fn), 0 where tp is 0."""
    defined = (tp + fp > 0) & (tp + fn > 0)
    return np.where(defined, _ratio(2 * tp, 2 * tp + fp + fn), np.nan)


def class_scores(counts: np.ndarray) -> dict[str, np.ndarray]:
    """Precision, recall and F1 per class from confusion counts (``COUNTS`` on the last axis),
    NaN where undefined (the module's rule: a class the rater or the reference never used)."""
    tp, fp, fn, tn = (counts[..., i].astype(float) for i in range(4))
    return {
        "precision_met": _ratio(tp, tp + fp),
        "recall_met": _ratio(tp, tp + fn),
        "f1_met": _f1(tp, fp, fn),
        "precision_not_met": _ratio(tn, tn + fn),
        "recall_not_met": _ratio(tn, tn + fp),
        "f1_not_met": _f1(tn, fn, fp),
    }


def balanced_f1(counts: np.ndarray) -> np.ndarray:
    """Mean of the two classes' F1; NaN unless both are defined (simple-evals gives none)."""
    scores = class_scores(counts)
    return (scores["f1_met"] + scores["f1_not_met"]) / 2


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
    of each item's consultation (in sorted order: the bootstrap's units), case, polarity and
    category (each in sorted name order), and per rater which items it judged and how."""

    cases: np.ndarray  # int: index into sorted consultation ids (the resampled unit)
    case_count: int  # consultations
    instances: np.ndarray  # int: index into sorted case (instance) ids
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
    case_names = sorted({d.unit for d in details})
    case_code = {name: i for i, name in enumerate(case_names)}
    instance_code = {name: i for i, name in enumerate(sorted({d.case for d in details}))}
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
    cases = np.array([case_code[d.unit] for d in details], dtype=np.int64)
    instances = np.array([instance_code[d.case] for d in details], dtype=np.int64)
    return ItemArrays(cases, len(case_names), instances, strata, judged, met)


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


def _items(arrays: ItemArrays, paired: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per axis (ALL included) and stratum, how many of the ``paired`` items it holds and
    how many distinct cases they come from."""
    instances = arrays.instances[paired]
    found = {ALL: (np.array([int(paired.sum())]), np.array([len(np.unique(instances))]))}
    for axis, (names, codes) in arrays.strata.items():
        held = codes[paired]
        pairs = np.unique(held * (int(instances.max(initial=0)) + 1) + instances)
        cases = np.bincount(pairs // (int(instances.max(initial=0)) + 1), minlength=len(names))
        found[axis] = (np.bincount(held, minlength=len(names)), cases)
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
    heads: list[tuple[str, str, str, str, str, int, int, int]] = []
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
                held, cases = items[axis]
                heads.append(
                    (name, kind, reference, axis, stratum, pairs, int(held[code]), int(cases[code]))
                )
                units.append(counts[counts.sum(axis=1) > 0])
    intervals = bootstrap_statistic_cis(units, balanced_f1, seed=seed, resamples=resamples)
    rows = []
    for head, counts, interval in zip(heads, units, intervals, strict=True):
        name, kind, reference, axis, stratum, pairs, items, cases = head
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
                cases=cases,
                consultations=len(counts),
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
