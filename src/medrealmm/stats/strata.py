"""Stratification axes of paper 4.4 and 7.4: specialty group, department, sub-specialty, intent,
stage, image count, dialogue turns, and where the challenge point falls in its consultation.
Intents and stages are shown by their Chinese names from the taxonomies, in taxonomy order;
departments fold into groups by an editable YAML mapping."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from medrealmm.mccp.taxonomy import builtin_taxonomy
from medrealmm.stats.cases import CaseRecord
from medrealmm.stats.specialty import builtin_specialty_groups

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


def _taxonomy_label(name: str) -> Callable[[CaseRecord], tuple[int | str, str]]:
    """(taxonomy position, Chinese name); an id the taxonomy lacks sorts last under its id."""

    def key(record: CaseRecord) -> tuple[int | str, str]:
        taxonomy = builtin_taxonomy(name)
        value = getattr(record, name)
        names = {label.id: label.name for label in taxonomy.labels}
        if value in names:
            return (taxonomy.ids.index(value), names[value])
        return (len(names), str(value))

    return key


#: Where t* falls in its consultation (``Instance.position``), in reading order.
POSITIONS = {"early": "前段", "middle": "中段", "late": "后段"}


def _position(record: CaseRecord) -> tuple[int | str, str]:
    names = list(POSITIONS)
    if record.position in POSITIONS:
        return (names.index(record.position), POSITIONS[record.position])
    return (len(names), record.position)


def _specialty_group(record: CaseRecord) -> tuple[int | str, str]:
    groups = builtin_specialty_groups()
    name = groups.group_of(record.department)
    return (groups.order(name), name)


@dataclass(frozen=True)
class Stratum:
    axis: str
    title: str  # Chinese axis label for figures and tables
    key: Callable[[CaseRecord], tuple[int | str, str]]  # (sort key, label)


STRATA: dict[str, Stratum] = {
    s.axis: s
    for s in (
        Stratum("specialty_group", "专科大类", _specialty_group),
        Stratum("department", "科室", _text("department")),
        Stratum("subspecialty", "亚专科", _text("subspecialty")),
        Stratum("intent", "患者意图", _taxonomy_label("intent")),
        Stratum("stage", "问诊阶段", _taxonomy_label("stage")),
        Stratum("image_count", "图片数量", lambda r: image_bin(r.image_count)),
        Stratum("turn_count", "对话轮数", lambda r: turn_bin(r.turn_count)),
        Stratum("position", "挑战点在问诊中的位置", _position),
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
