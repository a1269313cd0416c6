"""Stratification axes of paper 4.4 and 7.4: department, sub-specialty, intent, stage, image
count and dialogue turns."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from medrealmm.stats.cases import CaseRecord

TURN_BIN_WIDTH = 4
IMAGE_CAP = 6  # cases with more images than this share one bin


def image_bin(count: int) -> tuple[int, str]:
    return (count, str(count)) if count < IMAGE_CAP else (IMAGE_CAP, f"≥{IMAGE_CAP}")


def turn_bin(turns: int) -> tuple[int, str]:
    low = max(turns - 1, 0) // TURN_BIN_WIDTH * TURN_BIN_WIDTH + 1
    return (low, f"{low}–{low + TURN_BIN_WIDTH - 1}")


def _text(attr: str) -> Callable[[CaseRecord], tuple[int | str, str]]:
    def key(record: CaseRecord) -> tuple[int | str, str]:
        value = getattr(record, attr)
        return (value, value)

    return key


@dataclass(frozen=True)
class Stratum:
    axis: str
    title: str  # Chinese axis label for figures and tables
    key: Callable[[CaseRecord], tuple[int | str, str]]  # (sort key, label)


STRATA: dict[str, Stratum] = {
    s.axis: s
    for s in (
        Stratum("department", "科室", _text("department")),
        Stratum("subspecialty", "亚专科", _text("subspecialty")),
        Stratum("intent", "患者意图", _text("intent")),
        Stratum("stage", "问诊阶段", _text("stage")),
        Stratum("image_count", "图片数量", lambda r: image_bin(r.image_count)),
        Stratum("turn_count", "对话轮数", lambda r: turn_bin(r.turn_count)),
    )
}


def stratify(records: Iterable[CaseRecord], axis: str) -> dict[str, list[CaseRecord]]:
    """Records grouped by the axis' label, groups in the axis' natural order."""
    if axis not in STRATA:
        raise ValueError(f"unknown stratification axis {axis!r}; choose from {sorted(STRATA)}")
    key = STRATA[axis].key
    groups: dict[tuple[int | str, str], list[CaseRecord]] = defaultdict(list)
    for record in records:
        groups[key(record)].append(record)
    return {label: groups[(order, label)] for order, label in sorted(groups, key=_order)}


def _order(item: tuple[int | str, str]) -> tuple[int, int | str, str]:
    order, label = item
    return (0, order, label) if isinstance(order, int) else (1, 0, str(order))
