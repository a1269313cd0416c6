"""Two-rater agreement over binary criterion verdicts (paper 7.3).

Verdicts are skewed (most criteria are clearly met or clearly missed), which makes Cohen's
kappa unstable; Gwet's AC1 is the headline number and kappa is kept beside it for comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Agreement:
    n: int
    observed: float  # p_o
    positive_rate: float  # pi, the mean positive rate of the two raters
    ac1: float
    kappa: float | None  # None when undefined (see cohen_kappa)


def _checked(a: Sequence[bool], b: Sequence[bool]) -> int:
    if len(a) != len(b):
        raise ValueError(f"raters must judge the same items: {len(a)} vs {len(b)} verdicts")
    if not a:
        raise ValueError("agreement needs at least one item judged by both raters; got none")
    return len(a)


def raw_agreement(a: Sequence[bool], b: Sequence[bool]) -> float:
    """p_o: the share of items on which the two raters give the same verdict."""
    n = _checked(a, b)
    return sum(bool(x) == bool(y) for x, y in zip(a, b, strict=True)) / n


def positive_rate(a: Sequence[bool], b: Sequence[bool]) -> float:
    n = _checked(a, b)
    return (sum(map(bool, a)) + sum(map(bool, b))) / (2 * n)


def gwet_ac1(a: Sequence[bool], b: Sequence[bool]) -> float:
    """AC1 = (p_o - p_e) / (1 - p_e) with p_e = 2 pi (1 - pi).

    Always defined for non-empty input: p_e is at most 1/2. Two raters who give one identical
    label throughout agree perfectly, so AC1 = 1 (where kappa is undefined).
    """
    p_o = raw_agreement(a, b)
    pi = positive_rate(a, b)
    p_e = 2 * pi * (1 - pi)
    return (p_o - p_e) / (1 - p_e)


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa, or None when chance agreement is 1 (both raters constant and equal)."""
    n = _checked(a, b)
    p_o = raw_agreement(a, b)
    pa = sum(map(bool, a)) / n
    pb = sum(map(bool, b)) / n
    p_e = pa * pb + (1 - pa) * (1 - pb)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1 - p_e)


def agreement(a: Sequence[bool], b: Sequence[bool]) -> Agreement:
    """All four figures from one count of each kind (the same integer counts, so the same
    floats, as the functions above): a report's rater pairs run over a million verdicts."""
    n = _checked(a, b)
    pos_a = sum(map(bool, a))
    pos_b = sum(map(bool, b))
    both = sum(map(bool, map(min, map(bool, a), map(bool, b))))  # both positive
    return agreement_of_counts(n, pos_a, pos_b, both)


def agreement_of_counts(n: int, pos_a: int, pos_b: int, both: int) -> Agreement:
    """``agreement`` from its counts: of ``n`` items, each rater's positives and those both
    gave (a caller holding the verdicts as arrays counts them there)."""
    if n <= 0:
        raise ValueError("agreement needs at least one item judged by both raters; got none")
    p_o = (n - pos_a - pos_b + 2 * both) / n  # same verdict: both positive or both negative
    pi = (pos_a + pos_b) / (2 * n)
    p_e = 2 * pi * (1 - pi)
    pa, pb = pos_a / n, pos_b / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return Agreement(
        n=n,
        observed=p_o,
        positive_rate=pi,
        ac1=(p_o - p_e) / (1 - p_e),
        kappa=None if chance >= 1.0 else (p_o - chance) / (1 - chance),
    )
