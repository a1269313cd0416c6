"""Φ_bal: capped, floor-topped, seeded and independent of input order."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from pydantic import ValidationError

from medrealmm.corpus import BalanceConfig, DropReason, balance, water_fill_cap

SKEWED = [(f"d{i:03d}", "皮肤科") for i in range(50)] + [
    *[(f"n{i:03d}", "内分泌科") for i in range(12)],
    *[(f"p{i:03d}", "儿科") for i in range(3)],
    ("o000", "肿瘤科"),
]


def _counts(result) -> Counter[str]:
    return Counter(pick.department for pick in result.picks)


def test_no_cap_keeps_everything() -> None:
    result = balance(SKEWED, BalanceConfig())
    assert len(result.picks) == len(SKEWED) and not result.drops


def test_cap_limits_big_departments_and_keeps_the_tail() -> None:
    result = balance(SKEWED, BalanceConfig(cap=10))
    assert _counts(result) == {"皮肤科": 10, "内分泌科": 10, "儿科": 3, "肿瘤科": 1}
    assert len(result.drops) == 40 + 2
    assert {d.reason for d in result.drops} == {DropReason.DEPARTMENT_CAP}
    assert result.drops[0].detail.startswith("cap=10 pool=")


def test_same_seed_same_sample_regardless_of_input_order() -> None:
    shuffled = SKEWED[:]
    random.Random(7).shuffle(shuffled)
    first = balance(SKEWED, BalanceConfig(cap=10, seed=3))
    second = balance(shuffled, BalanceConfig(cap=10, seed=3))
    assert first.picks == second.picks
    other = balance(SKEWED, BalanceConfig(cap=10, seed=4))
    assert other.picks != first.picks


def test_target_total_derives_the_cap_by_water_filling() -> None:
    assert water_fill_cap([50, 12, 3, 1], 30) == 14  # 14 + 12 + 3 + 1 = 30; 15 -> 31
    assert water_fill_cap([50, 12, 3, 1], 1000) == 50
    result = balance(SKEWED, BalanceConfig(target_total=30))
    assert result.cap == water_fill_cap([50, 12, 3, 1], 30)
    assert len(result.picks) <= 30


def test_long_tail_is_oversampled_with_replacement_only_when_asked() -> None:
    without = balance(SKEWED, BalanceConfig(cap=10, min_per_department=5))
    assert _counts(without)["肿瘤科"] == 1 and not any(p.is_copy for p in without.picks)
    with_copies = balance(
        SKEWED, BalanceConfig(cap=10, min_per_department=5, with_replacement=True)
    )
    counts = _counts(with_copies)
    assert counts["肿瘤科"] == 5 and counts["儿科"] == 5 and counts["内分泌科"] == 10
    copies = [p for p in with_copies.picks if p.is_copy]
    assert len(copies) == 4 + 2
    assert {p.source_id for p in copies if p.department == "肿瘤科"} == {"o000"}
    assert len({p.id for p in with_copies.picks}) == len(with_copies.picks)  # ids stay unique
    again = balance(SKEWED, BalanceConfig(cap=10, min_per_department=5, with_replacement=True))
    assert again.picks == with_copies.picks


def test_conflicting_settings_are_rejected() -> None:
    with pytest.raises(ValidationError):
        BalanceConfig(cap=5, target_total=10)
    with pytest.raises(ValidationError):
        BalanceConfig(cap=5, min_per_department=6)


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"cap": 7, "seed": 3},
        {"cap": 1},
        {"cap": 40, "seed": 5},  # a department past random.sample's set-based branch
        {"target_total": 60, "min_per_department": 5, "with_replacement": True, "seed": 2},
        {"target_total": 9, "min_per_department": 4, "with_replacement": True},
        {"min_per_department": 30, "with_replacement": True},
    ],
)
def test_the_streamed_balance_picks_and_drops_what_the_in_memory_one_does(
    settings: dict[str, object],
) -> None:
    from medrealmm.corpus.balance import balance_cap, balance_stream
    from medrealmm.corpus.reasons import Drop

    rng = random.Random(11)
    pool = [(f"{rng.random():.6f}", "皮肤科") for _ in range(400)] + [
        *SKEWED,
        *[(f"x{i:03d}", "眼科") for i in range(25)],
    ]
    rng.shuffle(pool)
    config = BalanceConfig.model_validate(settings)
    expected = balance(pool, config)
    by_department: dict[str, list[str]] = {}
    for consultation_id, department in pool:
        by_department.setdefault(department, []).append(consultation_id)
    sizes = {name: len(ids) for name, ids in by_department.items()}
    cap = balance_cap(sizes.values(), config)
    items = list(balance_stream(sizes, lambda d: sorted(by_department[d]), config, cap))
    picks = sorted((i for i in items if not isinstance(i, Drop)), key=lambda p: p.id)
    drops = sorted((i for i in items if isinstance(i, Drop)), key=lambda d: d.consultation_id)
    assert cap == expected.cap
    assert picks == expected.picks
    assert drops == expected.drops
