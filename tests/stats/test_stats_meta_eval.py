"""Meta-evaluation F1s pinned against scikit-learn, and the physician baseline's shape."""

from __future__ import annotations

import random

import numpy as np
import pytest

from medrealmm.stats.bootstrap import bootstrap_statistic_ci
from medrealmm.stats.meta_eval import (
    ALL,
    ALL_PHYSICIANS,
    ItemInfo,
    balanced_f1,
    class_scores,
    confusion,
    meta_evaluate,
    physician_spread,
)

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def _labels(seed: int, n: int, flip: float, truth: list[bool] | None = None) -> list[bool]:
    rng = random.Random(seed)
    truth = truth or [rng.random() < 0.6 for _ in range(n)]
    return [(not v) if rng.random() < flip else v for v in truth]


@pytest.mark.parametrize("seed", range(6))
def test_class_scores_equal_scikit_learn(seed: int) -> None:
    truth = _labels(seed, 57, 0.0)
    reference = _labels(seed + 100, 57, 0.1, truth)
    rater = _labels(seed + 200, 57, 0.25, truth)
    scores = class_scores(confusion(rater, reference))
    precision, recall, f1, _ = sklearn_metrics.precision_recall_fscore_support(
        reference, rater, labels=[True, False], zero_division=0
    )
    assert scores["precision_met"] == pytest.approx(precision[0], abs=1e-12)
    assert scores["recall_met"] == pytest.approx(recall[0], abs=1e-12)
    assert scores["f1_met"] == pytest.approx(f1[0], abs=1e-12)
    assert scores["precision_not_met"] == pytest.approx(precision[1], abs=1e-12)
    assert scores["recall_not_met"] == pytest.approx(recall[1], abs=1e-12)
    assert scores["f1_not_met"] == pytest.approx(f1[1], abs=1e-12)
    macro = sklearn_metrics.f1_score(reference, rater, average="macro", zero_division=0)
    assert balanced_f1(confusion(rater, reference)) == pytest.approx(macro, abs=1e-12)


def _simple_evals_balanced_f1(rater: list[bool], reference: list[bool]) -> float | None:
    """simple-evals' rule as its meta-evaluation documents it, over scikit-learn: a class's
    precision is undefined where the rater never gave it, its recall where the reference
    never did; its F1 is undefined if either is (0 where both are 0), and the balanced F1
    is the mean of the two classes' F1, undefined if either is."""
    f1s = []
    for label in (True, False):
        precision = sklearn_metrics.precision_score(
            reference, rater, pos_label=label, zero_division=np.nan
        )
        recall = sklearn_metrics.recall_score(
            reference, rater, pos_label=label, zero_division=np.nan
        )
        if np.isnan(precision) or np.isnan(recall):
            return None
        f1s.append(
            0.0 if precision == recall == 0 else 2 * precision * recall / (precision + recall)
        )
    return sum(f1s) / 2


@pytest.mark.parametrize(
    ("rater", "reference"),
    [
        ([False, False, False], [False, False, False]),  # nobody says met
        ([False, False, False], [True, False, False]),  # the rater never says met
        ([True, False, True], [False, False, False]),  # the reference never says met
        ([True, True], [True, False]),  # the rater never says not met
        ([True, False], [False, True]),  # both classes used, never agreeing: 0, not empty
        ([True, False, True, False], [True, False, False, False]),
    ],
)
def test_an_undefined_class_leaves_balanced_f1_empty_as_simple_evals(
    rater: list[bool], reference: list[bool]
) -> None:
    expected = _simple_evals_balanced_f1(rater, reference)
    found = float(balanced_f1(confusion(rater, reference)))
    if expected is None:
        assert np.isnan(found)
    else:
        assert found == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_balanced_f1_equals_the_simple_evals_rule_on_small_random_panels(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 6)
    rater = [rng.random() < rng.random() for _ in range(n)]
    reference = [rng.random() < rng.random() for _ in range(n)]
    expected = _simple_evals_balanced_f1(rater, reference)
    found = float(balanced_f1(confusion(rater, reference)))
    assert (expected is None and np.isnan(found)) or found == pytest.approx(expected, abs=1e-12)


def test_a_row_with_an_undefined_class_shows_no_balanced_f1() -> None:
    graders, physicians, info = _panel()
    graders["never-met"] = dict.fromkeys(next(iter(physicians.values())), False)
    rows = meta_evaluate(graders, physicians, info, resamples=50)
    mine = [r for r in rows if r.rater == "never-met"]
    assert mine and all(r.balanced_f1 is None and r.f1_met is None for r in mine)
    assert all(r.f1_not_met is not None for r in mine)


def _panel(cases: int = 12, per_case: int = 6) -> tuple[dict, dict, dict]:
    rng = random.Random(3)
    info, truth = {}, {}
    for c in range(cases):
        for j in range(per_case):
            item = (f"m|img|case-{c}|0", f"c{j}")
            info[item] = ItemInfo(f"case-{c}", "positive" if j < 4 else "negative", f"k{c % 2}")
            truth[item] = rng.random() < (0.6 if j < 4 else 0.2)

    def noisy(flip: float) -> dict:
        return {i: (not v) if rng.random() < flip else v for i, v in truth.items()}

    physicians = {"dr-1": noisy(0.1), "dr-2": noisy(0.1), "dr-3": noisy(0.15)}
    graders = {"good": noisy(0.05), "coin": {i: rng.random() < 0.5 for i in truth}}
    return graders, physicians, info


def test_pooled_row_pairs_each_item_with_every_other_physician() -> None:
    graders, physicians, info = _panel()
    rows = meta_evaluate(graders, physicians, info, resamples=200)
    head = {(r.rater, r.reference): r for r in rows if r.axis == ALL and r.stratum == ALL}
    good = head[("good", ALL_PHYSICIANS)]
    assert good.pairs == 3 * len(info) and good.items == len(info) and good.cases == 12
    rater = [graders["good"][i] for p in sorted(physicians) for i in sorted(info)]
    reference = [physicians[p][i] for p in sorted(physicians) for i in sorted(info)]
    macro = sklearn_metrics.f1_score(reference, rater, average="macro")
    assert good.balanced_f1 == pytest.approx(macro, abs=1e-4)
    one = head[("good", "dr-2")]
    macro = sklearn_metrics.f1_score(
        [physicians["dr-2"][i] for i in sorted(info)],
        [graders["good"][i] for i in sorted(info)],
        average="macro",
    )
    assert one.balanced_f1 == pytest.approx(macro, abs=1e-4) and one.pairs == len(info)
    own = head[("dr-1", ALL_PHYSICIANS)]  # a physician against the two others only
    assert own.kind == "physician" and own.pairs == 2 * len(info)
    assert ("dr-1", "dr-1") not in head
    assert head[("coin", ALL_PHYSICIANS)].balanced_f1 < good.balanced_f1
    assert good.f1_low <= good.balanced_f1 <= good.f1_high
    low, high = physician_spread(rows)
    assert low <= head[("dr-3", ALL_PHYSICIANS)].balanced_f1 <= high


def test_strata_split_by_polarity_and_category() -> None:
    graders, physicians, info = _panel()
    rows = meta_evaluate(graders, physicians, info, resamples=50)
    strata = {(r.axis, r.stratum) for r in rows if r.rater == "good"}
    assert strata == {
        (ALL, ALL),
        ("polarity", "positive"),
        ("polarity", "negative"),
        ("category", "k0"),
        ("category", "k1"),
    }
    negative = next(
        r for r in rows if (r.rater, r.reference, r.stratum) == ("good", ALL_PHYSICIANS, "negative")
    )
    assert negative.items == 12 * 2


def test_case_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    rng = np.random.default_rng(0)
    units = rng.integers(0, 5, size=(30, 4))
    a = bootstrap_statistic_ci(units, balanced_f1, seed=4, resamples=300)
    b = bootstrap_statistic_ci(units, balanced_f1, seed=4, resamples=300)
    assert a == b and a.low <= a.mean <= a.high and a.n == 30
    assert a.mean == pytest.approx(float(balanced_f1(units.sum(axis=0))))
    with pytest.raises(ValueError, match="at least one unit"):
        bootstrap_statistic_ci(units[:0], balanced_f1)
