"""Paired comparisons of two conditions on the cases both scored.

The difference is the mean over shared cases of (score A - score B). Its 95% CI is the
consultation-clustered paired bootstrap: each draw takes whole consultations, with both
conditions' scores of every case in them, and averages the case differences (the
percentile interval of ``bootstrap_mean_ci`` of the differences, clustered). The two-sided
p-value is a paired sign-flip permutation test at the consultation level: under "A and B are
exchangeable", each consultation's summed difference is as likely negated, so the p-value is
the share of the 2^k sign patterns (k consultations; a seeded random ``resamples`` of them,
counted as (1 + hits) / (1 + resamples), when 2^k exceeds ``resamples``) whose mean
difference is at least as far from 0 as the observed one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from medrealmm.stats.bootstrap import DEFAULT_RESAMPLES, bootstrap_mean_ci

#: Relative tolerance when a permuted statistic ties the observed one (float sums of the
#: same numbers in another order).
_TIE = 1e-9


@dataclass(frozen=True)
class PairedDifference:
    cases: int
    consultations: int
    difference: float  # mean of A - B over the shared cases
    low: float
    high: float
    p_value: float
    exact: bool  # the permutation test enumerated every sign pattern


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[str] | None = None,
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
) -> PairedDifference:
    """A - B on paired cases (``a[i]`` and ``b[i]`` score one case), ``clusters`` labelling
    each case's consultation (None: each case its own)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} scores of A for {len(b)} of B: pairs needed")
    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    labels = list(clusters) if clusters is not None else [str(i) for i in range(len(diffs))]
    interval = bootstrap_mean_ci(
        diffs.tolist(), clusters=labels, seed=seed, resamples=resamples, level=level
    )
    sums = _cluster_sums(diffs, labels)
    p_value, exact = sign_flip_p(sums, len(diffs), seed=seed, resamples=resamples)
    return PairedDifference(
        cases=len(diffs),
        consultations=len(sums),
        difference=interval.mean,
        low=interval.low,
        high=interval.high,
        p_value=p_value,
        exact=exact,
    )


def _cluster_sums(diffs: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    index: dict[str, int] = {}
    order = np.array([index.setdefault(label, len(index)) for label in labels], dtype=np.int64)
    return np.bincount(order, weights=diffs, minlength=len(index))


def sign_flip_p(
    sums: np.ndarray, cases: int, *, seed: int = 0, resamples: int = DEFAULT_RESAMPLES
) -> tuple[float, bool]:
    """Two-sided p-value of the mean difference ``sums.sum() / cases`` under sign flips of
    each consultation's summed difference; (p, exact)."""
    k = len(sums)
    observed = abs(float(sums.sum())) / cases
    if k == 0 or observed == 0:
        return 1.0, True
    bar = observed * (1 - _TIE)
    if 2**k <= resamples:
        patterns = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1) * 2 - 1
        hits = int(np.count_nonzero(np.abs(patterns @ sums) / cases >= bar))
        return hits / 2**k, True
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, resamples, 4096):
        rows = min(4096, resamples - start)
        signs = rng.integers(0, 2, size=(rows, k)) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ sums) / cases >= bar))
    return (1 + hits) / (1 + resamples), False
