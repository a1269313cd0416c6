"""Stratification axes of paper 4.4 and 7.4: specialty group, department, sub-specialty, intent,
stage, image count, dialogue turns, and where the challenge point falls in its consultation.
Intents and stages are shown by their Chinese names from the taxonomies, in taxonomy order;
departments fold into groups by an editable YAML mapping."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

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


Key = tuple[int | str, str]  # (sort key, label)


def _text(value: str) -> Key:
    return (value, value)


def _taxonomy_label(name: str) -> Callable[[str | None], Key]:
    """(taxonomy position, Chinese name); an id the taxonomy lacks sorts last under its id."""

    def key(value: str | None) -> Key:
        taxonomy = builtin_taxonomy(name)
        names = {label.id: label.name for label in taxonomy.labels}
        if value in names:
            return (taxonomy.ids.index(value), names[value])
        return (len(names), str(value))

    return key


#: Where t* falls in its consultation (``Instance.position``), in reading order.
POSITIONS = {"early": "前段", "middle": "中段", "late": "后段"}


def _position(value: str) -> Key:
    names = list(POSITIONS)
    if value in POSITIONS:
        return (names.index(value), POSITIONS[value])
    return (len(names), value)


def _specialty_group(department: str) -> Key:
    groups = builtin_specialty_groups()
    name = groups.group_of(department)
    return (groups.order(name), name)


@dataclass(frozen=True)
class Stratum:
    axis: str
    title: str  # Chinese axis label for figures and tables
    attribute: str  # the record attribute the stratum is a function of
    of_value: Callable[[Any], Key]  # that attribute's value -> (sort key, label)

    def key(self, record: CaseRecord) -> Key:
        return self.of_value(getattr(record, self.attribute))


STRATA: dict[str, Stratum] = {
    s.axis: s
    for s in (
        Stratum("specialty_group", "专科大类", "department", _specialty_group),
        Stratum("department", "科室", "department", _text),
        Stratum("subspecialty", "亚专科", "subspecialty", _text),
        Stratum("intent", "患者意图", "intent", _taxonomy_label("intent")),
        Stratum("stage", "问诊阶段", "stage", _taxonomy_label("stage")),
        Stratum("image_count", "图片数量", "image_count", image_bin),
        Stratum("turn_count", "对话轮数", "turn_count", turn_bin),
        Stratum("position", "挑战点在问诊中的位置", "position", _position),
    )
}


def stratify(records: Iterable[CaseRecord], axis: str) -> dict[str, list[CaseRecord]]:
    """Records grouped by the axis' label, groups in the axis' natural order; each distinct
    attribute value is labelled once, not once per record."""
    if axis not in STRATA:
        raise ValueError(f"unknown stratification axis {axis!r}; choose from {sorted(STRATA)}")
    stratum = STRATA[axis]
    keys: dict[Any, Key] = {}
    groups: dict[Key, list[CaseRecord]] = defaultdict(list)
    for record in records:
        value = getattr(record, stratum.attribute)
        key = keys.get(value)
        if key is None:
            key = keys[value] = stratum.of_value(value)
        groups[key].append(record)
    return {label: groups[(order, label)] for order, label in sorted(groups, key=stratum_order)}


def stratum_order(item: tuple[int | str, str]) -> tuple[int, int | str, str]:
    """Sort key of a stratum's (order, label): numbered ones first, in number order."""
    order, label = item
    return (0, order, label) if isinstance(order, int) else (1, 0, str(order))
