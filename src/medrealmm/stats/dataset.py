"""Dataset statistics of paper 3.5 / Figure 3, one pure function shared by the report and the
release card so both describe a benchmark with the same numbers."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from medrealmm.mccp.taxonomy import Taxonomy, builtin_taxonomy
from medrealmm.rubric.rounds import RubricDigest
from medrealmm.schema import Rubric


class Counted(Protocol):
    """What the statistics read of an instance: an ``Instance``, or the report's lean
    ``InstanceStrata`` (read without each dialogue)."""

    @property
    def id(self) -> str: ...
    @property
    def consultation_id(self) -> str: ...
    @property
    def department(self) -> str: ...
    @property
    def intent(self) -> str | None: ...
    @property
    def stage(self) -> str | None: ...
    @property
    def turn_count(self) -> int: ...
    @property
    def image_count(self) -> int: ...


#: quantity id -> Chinese name, in the order the report and card list them
QUANTITIES = {
    "turns": "对话轮数（截至 t*）",
    "images": "患者上传医学图片数",
    "criteria": "量表标准数",
    "positive": "正向标准数",
    "negative": "负向标准数",
}


def distribution(values: Sequence[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "mean": None, "median": None, "min": None, "max": None}
    return {
        "n": len(values),
        "mean": round(statistics.fmean(values), 2),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
    }


def label_counts(labels: Iterable[str | None], taxonomy: Taxonomy) -> list[dict[str, Any]]:
    """Every taxonomy label with its Chinese name and count (zeros kept), then unknown ids."""
    counts = Counter(label or "unlabelled" for label in labels)
    total = sum(counts.values())
    names = {label.id: label.name for label in taxonomy.labels}
    order = [*taxonomy.ids, *sorted(set(counts) - set(names))]
    return [
        {
            "label": label,
            "name": names.get(label, label),
            "cases": counts.get(label, 0),
            "share": round(counts.get(label, 0) / total, 4) if total else None,
        }
        for label in order
    ]


def quantity_values(
    instances: Sequence[Counted], rubrics: Mapping[str, Rubric | RubricDigest]
) -> dict[str, list[int]]:
    """Per quantity of ``QUANTITIES``, one value per instance (rubric sizes: per instance
    with a rubric)."""
    graded = [rubrics[i.id] for i in instances if i.id in rubrics]
    return {
        "turns": [i.turn_count for i in instances],
        "images": [i.image_count for i in instances],
        "criteria": [len(r.criteria) for r in graded],
        "positive": [sum(c.weight > 0 for c in r.criteria) for r in graded],
        "negative": [sum(c.weight < 0 for c in r.criteria) for r in graded],
    }


def value_counts(
    instances: Sequence[Counted], rubrics: Mapping[str, Rubric | RubricDigest]
) -> list[dict[str, Any]]:
    """Figure 3's distributions: for each quantity, how many instances take each value
    (every integer from the smallest to the largest, zeros kept, so a histogram has no gaps)."""
    rows = []
    for key, values in quantity_values(instances, rubrics).items():
        counts = Counter(values)
        for value in range(min(values, default=0), max(values, default=-1) + 1):
            rows.append(
                {"quantity": key, "name": QUANTITIES[key], "value": value, "cases": counts[value]}
            )
    return rows


def dataset_statistics(
    instances: Sequence[Counted],
    rubrics: Mapping[str, Rubric | RubricDigest],
    *,
    intent_taxonomy: Taxonomy | None = None,
    stage_taxonomy: Taxonomy | None = None,
) -> dict[str, Any]:
    """JSON-ready counts and distributions: turns, images, rubric sizes, positive and negative
    criteria per case (over instances that have a rubric), intents and stages by name."""
    graded = [rubrics[i.id] for i in instances if i.id in rubrics]
    values = quantity_values(instances, rubrics)
    return {
        "instances": len(instances),
        "consultations": len({i.consultation_id for i in instances}),
        "departments": len({i.department for i in instances}),
        "with_rubric": len(graded),
        "distributions": [
            {"quantity": key, "name": name, **distribution(values[key])}
            for key, name in QUANTITIES.items()
        ],
        "intents": label_counts(
            (i.intent for i in instances), intent_taxonomy or builtin_taxonomy("intent")
        ),
        "stages": label_counts(
            (i.stage for i in instances), stage_taxonomy or builtin_taxonomy("stage")
        ),
    }
