"""Seeded percentile-bootstrap confidence intervals for benchmark means.

With several challenge points per consultation the instances of one consultation are
correlated (a later context holds an earlier target), so the resampled unit is the
consultation (a cluster bootstrap): each draw takes whole consultations with all their
instances. With one instance per consultation it is the ordinary bootstrap, draw for draw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from threadpoolctl import threadpool_limits

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
    found = bootstrap_mean_cis([(values, clusters)], resamples=resamples, level=level, seed=seed)
    return found[0]


def bootstrap_mean_cis(
    many: Sequence[tuple[Sequence[float], Sequence[str] | None]],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
) -> list[Interval]:
    """``bootstrap_mean_ci`` of each ``(values, clusters)``, the same intervals: the draws
    depend only on the number of units, so those over as many units (a report's conditions,
    each on every case) share one generation of them, a chunk at a time, instead of drawing
    the same numbers again for each."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1); got {level}")
    if resamples < 1:
        raise ValueError(f"resamples must be positive; got {resamples}")
    found: list[Interval | None] = [None] * len(many)
    totals: list[tuple[np.ndarray, np.ndarray]] = []
    by_units: dict[int, list[int]] = {}
    for index, (values, clusters) in enumerate(many):
        if not values:
            raise ValueError("a confidence interval needs at least one value; got none")
        if clusters is not None and len(clusters) != len(values):
            raise ValueError(f"{len(clusters)} cluster labels for {len(values)} values")
        data = np.asarray(values, dtype=float)
        mean = float(data.mean())
        sums, sizes = _cluster_totals(data, clusters)
        totals.append((sums, sizes))
        count = None if clusters is None else len(sums)
        found[index] = Interval(mean=mean, low=mean, high=mean, n=len(data), clusters=count)
        if len(sums) > 1:
            by_units.setdefault(len(sums), []).append(index)
    tail = (1 - level) / 2
    for units, members in by_units.items():
        rng = np.random.default_rng(seed)
        means: list[list[np.ndarray]] = [[] for _ in members]
        for rows in _chunks(resamples, units):
            picks = rng.integers(0, units, size=(rows, units))
            for drawn, index in zip(means, members, strict=True):
                drawn.append(_means_of(*totals[index], picks))
        for drawn, index in zip(means, members, strict=True):
            low, high = np.quantile(np.concatenate(drawn), [tail, 1 - tail])
            found[index] = replace(found[index], low=float(low), high=float(high))  # type: ignore[arg-type]
    return [interval for interval in found if interval is not None]


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
    found = bootstrap_statistic_cis([units], statistic, resamples=resamples, level=level, seed=seed)
    return found[0]


def bootstrap_statistic_cis(
    many: Sequence[np.ndarray],
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
) -> list[Interval]:
    """``bootstrap_statistic_ci`` of each of ``many``, the same intervals in one pass: the
    draws depend only on the number of units, so every statistic over n units shares them,
    generated once, a chunk at a time (never the whole resamples x n matrix), and summed for
    all of them in one product."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1); got {level}")
    if resamples < 1:
        raise ValueError(f"resamples must be positive; got {resamples}")
    found: list[Interval | None] = [None] * len(many)
    by_size: dict[int, list[int]] = {}
    arrays = [np.asarray(units) for units in many]
    if any(len(data) == 0 for data in arrays):
        raise ValueError("a confidence interval needs at least one unit; got none")
    points = [float(statistic(data.sum(axis=0))) for data in arrays]
    for index, data in enumerate(arrays):
        point = points[index]
        if len(data) == 1:
            found[index] = Interval(mean=point, low=point, high=point, n=1)
        else:
            by_size.setdefault(len(data), []).append(index)
    tail = (1 - level) / 2
    for size, members in by_size.items():
        widths = [arrays[i].shape[1] for i in members]
        summed = _resampled_sums([arrays[i] for i in members], resamples, seed)
        start = 0
        for index, width in zip(members, widths, strict=True):
            point = points[index]
            values = np.asarray(statistic(summed[:, start : start + width]), dtype=float)
            start += width
            values = values[~np.isnan(values)]
            if not len(values):
                found[index] = Interval(mean=point, low=float("nan"), high=float("nan"), n=size)
                continue
            low, high = np.quantile(values, [tail, 1 - tail])
            found[index] = Interval(mean=point, low=float(low), high=float(high), n=size)
    return [interval for interval in found if interval is not None]


def _resampled_sums(parts: Sequence[np.ndarray], resamples: int, seed: int) -> np.ndarray:
    """Each resample's column sums of ``parts`` side by side (units x columns of counts,
    stacked straight into the product's dtype, not copied twice): how often the
    seeded generator draws each unit (the draws of ``bootstrap_mean_ci``, in the same chunks)
    times the unit's counts. float32 products run in BLAS and are exact while the sums stay
    below 2**24; past that, float64. The products run on one BLAS thread: on a busy machine
    idle BLAS threads spin and cost ten times the product's own CPU time."""
    units = len(parts[0])
    exact32 = units * max(max(int(part.max()) for part in parts), 1) < 2**24
    kind = np.float32 if exact32 else np.float64
    weights = np.concatenate(parts, axis=1, dtype=kind)
    out = np.empty((resamples, weights.shape[1]), dtype=np.float64)
    rng = np.random.default_rng(seed)
    start = 0
    with threadpool_limits(limits=1, user_api="blas"):
        counts_only = all(np.issubdtype(part.dtype, np.integer) for part in parts)
        drawn, mix = _spanning(weights) if counts_only else (np.arange(weights.shape[1]), None)
        weights = weights[:, drawn]
        for rows in _chunks(resamples, units, _SUM_DRAWS):
            picks = rng.integers(0, units, size=(rows, units))
            counts = np.empty((rows, units), dtype=kind)
            for row, units_drawn in zip(counts, picks, strict=True):  # a row fits in cache
                row[:] = np.bincount(units_drawn, minlength=units)
            del picks
            out[start : start + rows, drawn] = counts @ weights
            start += rows
        if mix is not None:
            out[:, mix.derived] = out[:, mix.basis] @ mix.coefficients
    return out


@dataclass(frozen=True)
class _Mix:
    """Columns ``derived`` of a weight matrix as whole-number combinations of ``basis``."""

    basis: np.ndarray
    derived: np.ndarray
    coefficients: np.ndarray  # basis x derived


def _spanning(weights: np.ndarray) -> tuple[np.ndarray, _Mix | None]:
    """The columns to sum by drawing, and how the others follow from them exactly (of
    whole-number counts: the caller's parts are integer arrays).

    Many statistics' counts are sums of others' (a pooled reference is the sum of its
    physicians', an overall stratum the sum of its parts), so a few columns span them all.
    Candidates come from a small sketch of the rows (sums of every k-th row) and are kept
    only where ``basis @ coefficients`` gives every unit's counts exactly: on whole numbers
    the derived sums are then the drawn sums to the last bit."""
    units, width = weights.shape
    every = np.arange(width)
    if width < 8:
        return every, None
    folds = min(units, 2 * width + 16)
    whole = units // folds * folds
    sketch = weights[:whole].reshape(-1, folds, width).sum(axis=0)  # whole numbers: exact
    sketch[: units - whole] += weights[whole:]
    sketch = sketch.astype(np.float64)
    basis, derived = _independent(sketch)
    if not derived:
        return every, None
    coefficients = np.rint(np.linalg.lstsq(sketch[:, basis], sketch[:, derived], rcond=None)[0])
    kept = np.ones(len(derived), dtype=bool)
    for start in range(0, units, _CHECK_ROWS):  # a block of units at a time: little memory
        block = weights[start : start + _CHECK_ROWS]
        made = block[:, basis].astype(np.float64) @ coefficients
        kept &= (made == block[:, derived]).all(axis=0)
    derived_kept = np.asarray(derived)[kept]
    drawn = np.setdiff1d(every, derived_kept)
    mix = _Mix(np.asarray(basis), derived_kept, coefficients[:, kept])
    return drawn, (mix if len(derived_kept) else None)


def _independent(sketch: np.ndarray) -> tuple[list[int], list[int]]:
    """Greedy split of the columns into a basis and those (numerically) in its span, the
    smallest first: parts come before their sums, which then follow with whole coefficients."""
    basis: list[int] = []
    derived: list[int] = []
    ortho = np.empty((len(sketch), 0))
    for column in np.argsort(np.abs(sketch).sum(axis=0), kind="stable").tolist():
        vector = sketch[:, column]
        rest = vector - ortho @ (ortho.T @ vector)
        norm = np.linalg.norm(rest)
        if norm <= 1e-9 * max(np.linalg.norm(vector), 1.0):
            derived.append(column)
            continue
        basis.append(column)
        ortho = np.column_stack([ortho, rest / norm])
    return basis, derived


def _means_of(sums: np.ndarray, sizes: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """Each resample's mean: its drawn clusters' sums over their sizes (singletons: a mean,
    whose summed sizes are the draw count itself, exactly, so they are not gathered)."""
    if sizes[0] == 1 and sizes.max() == 1:
        return sums[picks].sum(axis=1) / float(picks.shape[1])
    return sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)


#: Draws held at once: one (resamples x n) matrix of a large benchmark is gigabytes, and a
#: chunk's picks and the two arrays gathered by them are three times its size.
_CHUNK_DRAWS = 1 << 19
#: The same for the summed counts: a chunk's draws and the counts made of them, row by row.
_SUM_DRAWS = 1 << 19
#: Units checked at once for columns derived from others.
_CHECK_ROWS = 1 << 11


def _chunks(resamples: int, n: int, draws: int = _CHUNK_DRAWS) -> list[int]:
    """Resamples per draw (about ``draws`` numbers each), drawn in turn from one generator:
    the same numbers as one ``(resamples, n)`` draw, since each chunk but the last asks for
    an even count and numpy fills a small-range request from 64-bit words two 32-bit halves
    at a time."""
    rows = max(2, (draws // n) // 2 * 2)
    return [min(rows, resamples - start) for start in range(0, resamples, rows)]
