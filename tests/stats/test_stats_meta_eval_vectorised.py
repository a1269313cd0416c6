"""The vectorised meta-evaluation and batched bootstrap pinned against the simple reference:
a dict-and-loop version of each, written as the arithmetic reads, must give the same rows and
intervals to the last bit on small random panels."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict

import numpy as np
import pytest

from medrealmm.stats.bootstrap import Interval, _chunks, bootstrap_statistic_cis
from medrealmm.stats.meta_eval import (
    ALL,
    ALL_PHYSICIANS,
    ItemInfo,
    MetaRow,
    _float,
    balanced_f1,
    class_scores,
    meta_evaluate,
)

Item = tuple[str, str]


def reference_ci(units: np.ndarray, resamples: int, seed: int, level: float = 0.95) -> Interval:
    """One statistic: the whole (resamples x units) draw-count matrix, then one product."""
    point = float(balanced_f1(units.sum(axis=0)))
    if len(units) == 1:
        return Interval(mean=point, low=point, high=point, n=1)
    n = len(units)
    rng = np.random.default_rng(seed)
    draws = np.concatenate(
        [
            np.stack([np.bincount(row, minlength=n) for row in rng.integers(0, n, size=(k, n))])
            for k in _chunks(resamples, n)
        ]
    )
    values = balanced_f1((draws @ units).astype(np.float64))
    values = values[~np.isnan(values)]
    if not len(values):
        return Interval(mean=point, low=float("nan"), high=float("nan"), n=n)
    tail = (1 - level) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return Interval(mean=point, low=float(low), high=float(high), n=n)


def reference_meta(
    graders: Mapping[str, Mapping[Item, bool]],
    physicians: Mapping[str, Mapping[Item, bool]],
    info: Mapping[Item, ItemInfo],
    resamples: int,
    seed: int = 0,
) -> list[MetaRow]:
    """Item by item in dicts and sets, one bootstrap per row."""
    rows = []
    raters = [(n, "grader", v) for n, v in sorted(graders.items())]
    raters += [(n, "physician", v) for n, v in sorted(physicians.items())]
    for name, kind, verdicts in raters:
        others = {p: labels for p, labels in physicians.items() if p != name}
        references = [(ALL_PHYSICIANS, others), *((p, {p: others[p]}) for p in sorted(others))]
        mine = set(info) & verdicts.keys()
        strata = [(ALL, ALL, mine)]
        for axis in ("polarity", "category"):
            groups: dict[str, set[Item]] = defaultdict(set)
            for item in mine:
                groups[getattr(info[item], axis)].add(item)
            strata += [(axis, g, groups[g]) for g in sorted(groups)]
        for reference, labels in references:
            for axis, stratum, items in strata:
                pairs = [
                    (item, verdicts[item], found[item])
                    for found in labels.values()
                    for item in items & found.keys()
                ]
                if not pairs:
                    continue
                per_case: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
                for item, a, b in pairs:
                    per_case[info[item].unit][(0 if b else 1) if a else (2 if b else 3)] += 1
                units = np.array([per_case[c] for c in sorted(per_case)], dtype=np.int64)
                total = units.sum(axis=0)
                ci = reference_ci(units, resamples, seed)
                rows.append(
                    MetaRow(
                        name,
                        kind,
                        reference,
                        axis,
                        stratum,
                        len({i for i, _, _ in pairs}),
                        len(pairs),
                        len({info[i].case for i, _, _ in pairs}),
                        len(per_case),
                        **{k: _float(v) for k, v in class_scores(total).items()},
                        balanced_f1=_float(balanced_f1(total)),
                        f1_low=_float(ci.low),
                        f1_high=_float(ci.high),
                    )
                )
    return rows


def _random_panel(seed: int) -> tuple[dict, dict, dict]:
    rng = random.Random(seed)
    info, truth = {}, {}
    for c in range(rng.randint(1, 15)):
        for j in range(rng.randint(1, 6)):
            item = (f"m|img|case-{c:02d}|0", f"c{j}")
            info[item] = ItemInfo(
                f"case-{c:02d}",
                rng.choice(("positive", "negative")),
                f"k{c % 3}",
                rng.choice(("", f"consultation-{c // 3}")),  # several cases of one dialogue
            )
            truth[item] = rng.random() < 0.6

    def rater(flip: float, cover: float) -> dict:
        return {
            i: (not v) if rng.random() < flip else v
            for i, v in truth.items()
            if rng.random() < cover
        }

    physicians = {f"dr-{k}": rater(0.1, 0.8) for k in range(rng.randint(1, 4))}
    graders = {"judge": rater(0.1, 0.9), "dr-0": rater(0.3, 1.0)}  # a grader may share a name
    graders["stray"] = {("m|img|nowhere|0", "c0"): True, **rater(0.5, 0.5)}
    return graders, physicians, info


@pytest.mark.parametrize("seed", range(8))
def test_vectorised_meta_evaluation_equals_the_reference(seed: int) -> None:
    graders, physicians, info = _random_panel(seed)
    fast = meta_evaluate(graders, physicians, info, resamples=101, seed=seed)
    slow = reference_meta(graders, physicians, info, resamples=101, seed=seed)
    assert [asdict(r) for r in fast] == [asdict(r) for r in slow]


def test_batched_bootstrap_equals_one_statistic_at_a_time() -> None:
    rng = np.random.default_rng(5)
    many = [rng.integers(0, 4, size=(n, 4)) for n in (1, 7, 7, 30, 7, 2, 30)]
    many.append(np.zeros((7, 4), dtype=np.int64))  # every resample undefined: NaN interval
    batched = bootstrap_statistic_cis(many, balanced_f1, resamples=333, seed=9)
    for units, interval in zip(many, batched, strict=True):
        expected = reference_ci(units, 333, 9)
        assert repr(interval) == repr(expected)  # to the last bit; NaN where undefined


def test_batched_bootstrap_drawn_in_small_chunks_is_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Any even chunking gives the one draw's numbers: force many chunks and compare."""
    rng = np.random.default_rng(6)
    many = [rng.integers(0, 5, size=(n, 4)) for n in (9, 9, 40)]
    expected = [reference_ci(units, 250, 2) for units in many]
    monkeypatch.setattr("medrealmm.stats.bootstrap._SUM_DRAWS", 64)
    batched = bootstrap_statistic_cis(many, balanced_f1, resamples=250, seed=2)
    assert [repr(i) for i in batched] == [repr(i) for i in expected]


def test_counts_that_are_sums_of_others_follow_from_them_to_the_last_bit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pooled and overall counts are sums of their parts: only the parts are drawn, and the
    sums come out as the drawn ones would, bit for bit."""
    from medrealmm.stats import bootstrap

    rng = np.random.default_rng(4)
    a, b, c = (rng.integers(0, 5, size=(300, 4)) for _ in range(3))
    parts = [a + b + c, a, b, a + b, c, b + c, a + c]  # the sums first, as the rows list them
    drawn, mix = bootstrap._spanning(np.concatenate(parts, axis=1).astype(np.float32))
    assert len(drawn) == 12 and mix is not None and len(mix.derived) == 16
    derived = bootstrap._resampled_sums(parts, 301, 3)
    monkeypatch.setattr(bootstrap, "_spanning", lambda weights: (np.arange(28), None))
    assert np.array_equal(derived, bootstrap._resampled_sums(parts, 301, 3))
