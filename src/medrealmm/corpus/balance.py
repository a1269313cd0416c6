"""Φ_bal: department-stratified sampling, seeded per department so results never depend on
input order, worker count or engine.

High-volume departments are capped (the cap is given, or derived from a target corpus size
by water-filling); the long tail is kept whole and, only when asked, topped up to a floor
with copies drawn with replacement.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from medrealmm.corpus.config import BalanceConfig
from medrealmm.corpus.reasons import Drop, DropReason

COPY_MARK = "~dup"


@dataclass(frozen=True)
class Pick:
    """One slot of C3: which source case fills it and the id it carries there."""

    source_id: str
    id: str
    department: str

    @property
    def is_copy(self) -> bool:
        return self.source_id != self.id


@dataclass
class BalanceResult:
    picks: list[Pick] = field(default_factory=list)
    drops: list[Drop] = field(default_factory=list)
    cap: int | None = None


def copy_id(source_id: str, number: int) -> str:
    return f"{source_id}{COPY_MARK}{number}"


def water_fill_cap(sizes: Iterable[int], target_total: int) -> int:
    """The largest per-department cap c with sum(min(n, c)) <= target_total (at least 1)."""
    sizes = sorted(sizes)
    if not sizes or sum(sizes) <= target_total:
        return max(sizes, default=1)
    low, high = 1, sizes[-1]
    while low < high:
        mid = (low + high + 1) // 2
        if sum(min(n, mid) for n in sizes) <= target_total:
            low = mid
        else:
            high = mid - 1
    return low


def balance(pool: Iterable[tuple[str, str]], config: BalanceConfig) -> BalanceResult:
    """Sample ``(id, department)`` pairs; picks come back sorted by id."""
    by_department: dict[str, list[str]] = defaultdict(list)
    for consultation_id, department in pool:
        by_department[department].append(consultation_id)
    cap = config.cap
    if config.target_total is not None:
        cap = water_fill_cap((len(ids) for ids in by_department.values()), config.target_total)
        cap = max(cap, config.min_per_department or 1)
    result = BalanceResult(cap=cap)
    for department in sorted(by_department):
        ids = sorted(by_department[department])
        rng = random.Random(f"{config.seed}|{department}")
        keep = ids if cap is None or len(ids) <= cap else sorted(rng.sample(ids, cap))
        kept = set(keep)
        result.picks.extend(Pick(i, i, department) for i in keep)
        result.drops.extend(
            Drop.of(i, department, DropReason.DEPARTMENT_CAP, f"cap={cap} pool={len(ids)}")
            for i in ids
            if i not in kept
        )
        shortfall = config.min_per_department - len(ids)
        if config.with_replacement and shortfall > 0:
            copies: dict[str, int] = defaultdict(int)
            for source in rng.choices(ids, k=shortfall):
                copies[source] += 1
                result.picks.append(Pick(source, copy_id(source, copies[source]), department))
    result.picks.sort(key=lambda pick: pick.id)
    result.drops.sort(key=lambda drop: drop.consultation_id)
    return result
