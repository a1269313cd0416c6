"""Φ_bal: department-stratified sampling, seeded per department so results never depend on
input order, worker count or engine.

High-volume departments are capped (the cap is given, or derived from a target corpus size
by water-filling); the long tail is kept whole and, only when asked, topped up to a floor
with copies drawn with replacement.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
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


def balance_cap(sizes: Iterable[int], config: BalanceConfig) -> int | None:
    """The per-department cap: given, or water-filled from the target size (never below the
    floor)."""
    if config.target_total is None:
        return config.cap
    return max(water_fill_cap(sizes, config.target_total), config.min_per_department or 1)


def balance(pool: Iterable[tuple[str, str]], config: BalanceConfig) -> BalanceResult:
    """Sample ``(id, department)`` pairs; picks come back sorted by id.

    The in-memory form, for small pools; ``balance_stream`` makes the same picks and drops
    from counts and ids read back in order, for a pool that does not fit in memory.
    """
    by_department: dict[str, list[str]] = defaultdict(list)
    for consultation_id, department in pool:
        by_department[department].append(consultation_id)
    cap = balance_cap((len(ids) for ids in by_department.values()), config)
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


def balance_stream(
    sizes: Mapping[str, int],
    sorted_ids: Callable[[str], Iterable[str]],
    config: BalanceConfig,
    cap: int | None,
) -> Iterator[Pick | Drop]:
    """``balance`` over a pool on disk: ``sizes`` counts each department, ``sorted_ids`` reads
    one department's ids back in id order. Departments come in name order, picks and drops
    unsorted across them; sorted, they are ``balance``'s. Only a sampled department's kept
    positions are held (and the ids of one topped up, which is below the floor).

    ``random.sample`` and ``choices`` draw positions from the length alone, so drawing from
    ``range(n)`` and reading those positions of the sorted ids picks what the list form picks.
    """
    for department in sorted(sizes):
        size = sizes[department]
        rng = random.Random(f"{config.seed}|{department}")
        sampled = cap is not None and size > cap
        chosen = iter(sorted(rng.sample(range(size), cap)) if sampled else ())  # type: ignore[arg-type]
        next_kept = next(chosen, None) if sampled else None
        for position, consultation_id in enumerate(sorted_ids(department)):
            if not sampled or position == next_kept:
                yield Pick(consultation_id, consultation_id, department)
                next_kept = next(chosen, None) if sampled else None
            else:
                detail = f"cap={cap} pool={size}"
                yield Drop.of(consultation_id, department, DropReason.DEPARTMENT_CAP, detail)
        shortfall = config.min_per_department - size
        if config.with_replacement and shortfall > 0:
            ids = list(sorted_ids(department))
            copies: dict[str, int] = defaultdict(int)
            for source in rng.choices(ids, k=shortfall):
                copies[source] += 1
                yield Pick(source, copy_id(source, copies[source]), department)
