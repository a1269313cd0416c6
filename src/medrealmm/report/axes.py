"""Scores by axis (what a criterion measures: accuracy, completeness, ...), as HealthBench
breaks its score down by axis: a case's score on an axis is the rubric score of that axis's
criteria alone, and a case with no positive criterion on the axis has no score there (it is
not counted). Criteria of rubrics made before axes were tagged read as ``untagged``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from medrealmm.report.tables import SCALE, Table, headline_conditions
from medrealmm.rubric.rounds import CriterionDigest, rubric_digests
from medrealmm.schema.rubric import UNTAGGED, Axis
from medrealmm.stats.cases import CaseRecord
from medrealmm.stats.scoring import score_of
from medrealmm.stats.weighting import Weighting, weighted
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import SEP, VerdictKey

AXES = (*(axis.value for axis in Axis), UNTAGGED)
Item = tuple[str, str]  # (response key, criterion id)


def axis_of(criterion: CriterionDigest) -> str:
    return criterion.axis or UNTAGGED


def axis_scores(
    criteria: Sequence[CriterionDigest], verdicts: Mapping[str, bool | None]
) -> dict[str, float]:
    """One reply's score on each axis its rubric has a positive criterion on: clip(weight
    earned / positive weight) over that axis's criteria; a criterion without a yes or no
    (the grader could not assess it) counts as not met."""
    earned: dict[str, int] = {}
    positive: dict[str, int] = {}
    for criterion in criteria:
        axis = axis_of(criterion)
        if verdicts.get(criterion.id):
            earned[axis] = earned.get(axis, 0) + criterion.weight
        positive[axis] = positive.get(axis, 0) + max(criterion.weight, 0)
    return {axis: score_of(earned.get(axis, 0), total) for axis, total in positive.items() if total}


def read_verdicts(store: RunStore, grader: str, responses: set[str]) -> dict[str, dict]:
    """The grader's verdicts on ``responses``: response key -> criterion id -> value."""
    found: dict[str, dict[str, bool | None]] = {}
    if not responses:
        return found
    for key, raw in store.raw_rows(stages.EVAL_VERDICT, prefix=grader + SEP).items():
        parsed = VerdictKey.parse(key)
        if parsed.response in responses:
            value = json.loads(raw).get("value")
            found.setdefault(parsed.response, {})[parsed.criterion_id] = value
    return found


def axis_table(
    store: RunStore,
    records: Sequence[CaseRecord],
    overall: Table,
    *,
    grader: str,
    weighting: Weighting = Weighting.CASE,
) -> Table:
    """Per axis and headline condition (best first): the mean of the complete cases' axis
    scores, how many cases and consultations have one."""
    rubrics = rubric_digests(store)
    shown = set(headline_conditions(records))
    complete = [r for r in records if r.score is not None and r.condition in shown]
    keys = {stages.response_key(r.model, r.images, r.instance_id, r.sample): r for r in complete}
    verdicts = read_verdicts(store, grader, set(keys))
    per: dict[tuple[str, tuple[str, bool]], list[tuple[float, str]]] = {}
    for key, record in keys.items():
        rubric = rubrics.get(record.instance_id)
        if rubric is None:
            continue
        for axis, value in axis_scores(rubric.criteria, verdicts.get(key, {})).items():
            unit = record.consultation_id or record.instance_id
            per.setdefault((axis, record.condition), []).append((value, unit))
    return Table(
        "by_axis",
        "按评分维度（axis：准确性、完整性、情境感知、沟通、指令遵循）分解的得分：每例只计该维度的"
        "标准，该维度无正向标准的病例不计（同 HealthBench）；未标注维度的旧量表记为 untagged；"
        f"{Weighting(weighting).note}",
        ("axis", "label", "model", "images", "cases", "consultations", "mean"),
        list(_rows(per, overall, weighting)),
    )


def _rows(
    per: Mapping[tuple[str, tuple[str, bool]], list[tuple[float, str]]],
    overall: Table,
    weighting: Weighting,
) -> Iterable[dict[str, Any]]:
    for axis in AXES:
        for row in overall.rows:
            found = per.get((axis, (row["model"], row["images"])))
            if not found:
                continue
            values, units = weighted([v for v, _ in found], [u for _, u in found], weighting)
            yield {
                "axis": axis,
                "label": row["label"],
                "model": row["model"],
                "images": row["images"],
                "cases": len(found),
                "consultations": len(set(units)),
                "mean": round(sum(values) / len(values) * SCALE, 3),
            }
