"""Seeded percentile-bootstrap confidence intervals for benchmark means."""

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
    means = np.concatenate(
        [
            data[rng.integers(0, len(data), size=(rows, len(data)))].mean(axis=1)
            for rows in _chunks(resamples, len(data))
        ]
    )
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return Interval(mean=mean, low=float(low), high=float(high), n=len(data))


#: Draws held at once: one (resamples x n) matrix of a large benchmark is gigabytes.
_CHUNK_DRAWS = 1 << 21


def _chunks(resamples: int, n: int) -> list[int]:
    """Resamples per draw, drawn in turn from one generator: the same numbers as one
    ``(resamples, n)`` draw, since each chunk but the last asks for an even count and numpy
    fills a small-range request from 64-bit words two 32-bit halves at a time."""
    rows = max(2, (_CHUNK_DRAWS // n) // 2 * 2)
    return [min(rows, resamples - start) for start in range(0, resamples, rows)]
