"""Seeded percentile-bootstrap confidence intervals for benchmark means.

With several challenge points per consultation the instances of one consultation are
correlated (a later context holds an earlier target), so the resampled unit is the
consultation (a cluster bootstrap): each draw takes whole consultations with all their
instances. With one instance per consultation it is the ordinary bootstrap, draw for draw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

DEFAULT_RESAMPLES = 2000


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    n: int
    clusters: int | None = None  # consultations behind the figure, when resampled by them


def bootstrap_mean_ci(
    values: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
    clusters: Sequence[str] | None = None,
) -> Interval:
    """Percentile CI of the mean over resampled cases; the same seed gives the same interval.

    ``clusters`` (one label per value, e.g. its consultation) resamples whole clusters: each
    draw's mean is the mean over every value of the drawn clusters. Singleton clusters give
    exactly the instance bootstrap."""
    if not values:
        raise ValueError("a confidence interval needs at least one value; got none")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1); got {level}")
    if resamples < 1:
        raise ValueError(f"resamples must be positive; got {resamples}")
    if clusters is not None and len(clusters) != len(values):
        raise ValueError(f"{len(clusters)} cluster labels for {len(values)} values")
    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    sums, sizes = _cluster_totals(data, clusters)
    count = None if clusters is None else len(sums)
    if len(sums) == 1:
        return Interval(mean=mean, low=mean, high=mean, n=len(data), clusters=count)
    rng = np.random.default_rng(seed)
    units = len(sums)
    means = np.concatenate(
        [
            _means_of(sums, sizes, rng.integers(0, units, size=(rows, units)))
            for rows in _chunks(resamples, units)
        ]
    )
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return Interval(mean=mean, low=float(low), high=float(high), n=len(data), clusters=count)


def _cluster_totals(
    data: np.ndarray, clusters: Sequence[str] | None
) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster (in order of first appearance): the sum of its values and their count."""
    if clusters is None:
        return data, np.ones(len(data))
    index: dict[str, int] = {}
    order = np.array([index.setdefault(label, len(index)) for label in clusters])
    sums = np.bincount(order, weights=data, minlength=len(index))
    sizes = np.bincount(order, minlength=len(index)).astype(float)
    return sums, sizes


@lru_cache(maxsize=4)
def _multiplicity(units: int, resamples: int, seed: int) -> np.ndarray:
    """How often each unit is drawn in each resample (the draws of ``bootstrap_mean_ci``'s
    seeded generator, in the same chunks); shared by every statistic over the same number of
    units, read-only. float32, so the products with per-unit counts run in BLAS; exact while
    the summed counts stay below 2**24. A few sizes are kept: each is resamples x units."""
    rng = np.random.default_rng(seed)
    counts = np.empty((resamples, units), dtype=np.float32)
    start = 0
    for rows in _chunks(resamples, units):
        picks = rng.integers(0, units, size=(rows, units))
        flat = (np.arange(rows)[:, None] * units + picks).ravel()
        counts[start : start + rows] = np.bincount(flat, minlength=rows * units).reshape(
            rows, units
        )
        start += rows
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
    draws = _multiplicity(len(data), resamples, seed)
    if len(data) * int(data.max()) < 2**24:  # every summed count is exact in float32
        summed = (draws @ data.astype(np.float32)).astype(np.float64)
    else:
        summed = draws.astype(np.float64) @ data.astype(np.float64)
    values = np.asarray(statistic(summed), dtype=float)
    values = values[~np.isnan(values)]
    if not len(values):
        return Interval(mean=point, low=float("nan"), high=float("nan"), n=len(data))
    tail = (1 - level) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return Interval(mean=point, low=float(low), high=float(high), n=len(data))


def _means_of(sums: np.ndarray, sizes: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """Each resample's mean: its drawn clusters' sums over their sizes (singletons: a mean)."""
    return sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)


#: Draws held at once: one (resamples x n) matrix of a large benchmark is gigabytes.
_CHUNK_DRAWS = 1 << 21


def _chunks(resamples: int, n: int) -> list[int]:
    """Resamples per draw, drawn in turn from one generator: the same numbers as one
    ``(resamples, n)`` draw, since each chunk but the last asks for an even count and numpy
    fills a small-range request from 64-bit words two 32-bit halves at a time."""
    rows = max(2, (_CHUNK_DRAWS // n) // 2 * 2)
    return [min(rows, resamples - start) for start in range(0, resamples, rows)]
