"""Seeded percentile-bootstrap confidence intervals for benchmark means."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

DEFAULT_RESAMPLES = 2000


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    n: int


def bootstrap_mean_ci(
    values: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Percentile CI of the mean over resampled cases; the same seed gives the same interval."""
    if not values:
        raise ValueError("a confidence interval needs at least one value; got none")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1); got {level}")
    if resamples < 1:
        raise ValueError(f"resamples must be positive; got {resamples}")
    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    if len(data) == 1:
        return Interval(mean=mean, low=mean, high=mean, n=1)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(data), size=(resamples, len(data)))
    means = data[picks].mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return Interval(mean=mean, low=float(low), high=float(high), n=len(data))


@cache
def _multiplicity(units: int, resamples: int, seed: int) -> np.ndarray:
    """How often each unit is drawn in each resample (the draws of ``bootstrap_mean_ci``'s
    seeded generator); shared by every statistic over the same number of units, read-only."""
    picks = np.random.default_rng(seed).integers(0, units, size=(resamples, units))
    flat = (np.arange(resamples)[:, None] * units + picks).ravel()
    counts = np.bincount(flat, minlength=resamples * units).reshape(resamples, units)
    counts.setflags(write=False)
    return counts


def bootstrap_statistic_ci(
    units: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Percentile CI of a statistic of summed per-unit counts, resampling units (cases).

    ``units`` has one row per unit (e.g. a case's confusion counts); ``statistic`` maps an
    array of summed rows (last axis = the counts) to one value each, vectorised, NaN where
    undefined (such resamples are left out). The point estimate is the statistic of the total.
    """
    if len(units) == 0:
        raise ValueError("a confidence interval needs at least one unit; got none")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1); got {level}")
    if resamples < 1:
        raise ValueError(f"resamples must be positive; got {resamples}")
    data = np.asarray(units)
    point = float(statistic(data.sum(axis=0)))
    if len(data) == 1:
        return Interval(mean=point, low=point, high=point, n=1)
    values = np.asarray(statistic(_multiplicity(len(data), resamples, seed) @ data), dtype=float)
    values = values[~np.isnan(values)]
    if not len(values):
        return Interval(mean=point, low=float("nan"), high=float("nan"), n=len(data))
    tail = (1 - level) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return Interval(mean=point, low=float(low), high=float(high), n=len(data))
