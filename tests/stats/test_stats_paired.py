"""Paired differences pinned: the CI to a brute-force consultation loop, the p-value to
scipy's paired permutation test (exact) and to a loop over the same seeded sign draws."""

from __future__ import annotations

import random
from collections import defaultdict

import numpy as np
import pytest

from medrealmm.stats.paired import paired_difference

scipy_stats = pytest.importorskip("scipy.stats")


def _paired(seed: int, consultations: int) -> tuple[list[float], list[float], list[str]]:
    rng = random.Random(seed)
    a, b, labels = [], [], []
    for c in range(consultations):
        for _ in range(rng.randint(1, 3)):
            base = rng.random()
            a.append(round(min(1.0, base + rng.gauss(0.05, 0.1)), 3))
            b.append(round(base, 3))
            labels.append(f"c{c}")
    return a, b, labels


def brute_paired_ci(a, b, labels, *, seed: int, resamples: int) -> tuple[float, float]:
    members: dict[str, list[float]] = defaultdict(list)
    for x, y, label in zip(a, b, labels, strict=True):
        members[label].append(x - y)
    names = list(members)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(names), size=(resamples, len(names)))
    means = []
    for row in picks:
        pooled = [d for pick in row for d in members[names[pick]]]
        means.append(sum(pooled) / len(pooled))
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


@pytest.mark.parametrize("seed", range(4))
def test_paired_ci_is_the_consultation_bootstrap_of_the_differences(seed: int) -> None:
    a, b, labels = _paired(seed, 9)
    found = paired_difference(a, b, labels, seed=seed, resamples=400)
    low, high = brute_paired_ci(a, b, labels, seed=seed, resamples=400)
    assert found.difference == pytest.approx(np.mean(np.subtract(a, b)), abs=1e-12)
    assert (found.low, found.high) == pytest.approx((low, high), abs=1e-12)
    assert (found.cases, found.consultations) == (len(a), 9)


@pytest.mark.parametrize("seed", range(4))
def test_exact_p_value_equals_scipy_paired_permutation_test(seed: int) -> None:
    """2^8 sign patterns <= 2000 resamples: every one enumerated, as scipy does with
    permutation_type='samples' on the consultations' summed scores."""
    a, b, labels = _paired(seed, 8)
    found = paired_difference(a, b, labels, seed=seed, resamples=2000)
    assert found.exact
    sums_a = defaultdict(float)
    sums_b = defaultdict(float)
    for x, y, label in zip(a, b, labels, strict=True):
        sums_a[label] += x
        sums_b[label] += y
    names = sorted(sums_a)
    result = scipy_stats.permutation_test(
        ([sums_a[n] for n in names], [sums_b[n] for n in names]),
        lambda x, y, axis=-1: (np.sum(x, axis=axis) - np.sum(y, axis=axis)) / len(a),
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=10_000,
        vectorized=True,
    )
    assert found.p_value == pytest.approx(result.pvalue, abs=1e-12)


def test_monte_carlo_p_value_equals_a_loop_over_the_same_draws() -> None:
    a, b, labels = _paired(1, 16)  # 2^16 patterns > 500 resamples: drawn
    found = paired_difference(a, b, labels, seed=5, resamples=500)
    assert not found.exact
    sums = defaultdict(float)
    for x, y, label in zip(a, b, labels, strict=True):
        sums[label] += x - y
    values = list(sums.values())  # in order of first appearance, as the function holds them
    observed = abs(sum(values)) / len(a)
    rng = np.random.default_rng(5)
    signs = rng.integers(0, 2, size=(500, len(values))) * 2 - 1
    hits = 0
    for row in signs:
        flipped = abs(sum(s * v for s, v in zip(row, values, strict=True))) / len(a)
        hits += flipped >= observed * (1 - 1e-9)
    assert found.p_value == pytest.approx((1 + hits) / 501, abs=1e-12)


def test_no_difference_has_p_one_and_a_zero_interval() -> None:
    found = paired_difference([0.5, 0.7], [0.5, 0.7], ["x", "y"])
    assert (found.difference, found.low, found.high, found.p_value) == (0.0, 0.0, 0.0, 1.0)
