"""Seeded percentile-bootstrap confidence intervals for benchmark means.

With several challenge points per consultation the instances of one consultation are
correlated (a later context holds an earlier target), so the resampled unit is the
consultation (a cluster bootstrap): each draw takes whole consultations with all their
instances. With one instance per consultation it is the ordinary bootstrap, draw for draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
    picks = rng.integers(0, len(sums), size=(resamples, len(sums)))
    means = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
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
