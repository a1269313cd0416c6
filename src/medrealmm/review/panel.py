"""Physician panel grading: a binary verdict per rubric criterion, for judge-agreement studies.

Verdicts go to ``stages.PANEL_VERDICT`` as ``schema.Verdict`` keyed
``f"{reviewer}|{response key}|{criterion id}"`` so the stats phase can pair them with LLM judges.
"""

from __future__ import annotations

from dataclasses import dataclass

from medrealmm.review.cases import rubric_for
from medrealmm.schema import Response, Rubric, Verdict, VerdictStatus
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import VerdictKey


@dataclass(frozen=True)
class PanelItem:
    response_key: str
    response: Response
    criteria_total: int
    graded: int
    rubric_approved: bool

    @property
    def done(self) -> bool:
        return self.graded >= self.criteria_total


def verdict_key(reviewer: str, response_key: str, criterion_id: str) -> str:
    return VerdictKey(reviewer, response_key, criterion_id).format()


def response_key_of(response: Response) -> str:
    return stages.response_key(
        response.model, response.images, response.instance_id, response.sample
    )


def queue(store: RunStore, reviewer: str) -> list[PanelItem]:
    """Every answered response whose instance has a rubric, with this reviewer's progress."""
    mine = {k for k in store.keys(stages.PANEL_VERDICT) if k.startswith(f"{reviewer}|")}
    rubrics: dict[str, Rubric | None] = {}
    items: list[PanelItem] = []
    for response in store.iter(stages.EVAL_RESPONSE, Response):
        if response.status is not VerdictStatus.OK or response.text is None:
            continue
        if response.instance_id not in rubrics:
            rubrics[response.instance_id] = rubric_for(store, response.instance_id)
        rubric = rubrics[response.instance_id]
        if rubric is None:
            continue
        key = response_key_of(response)
        graded = sum(verdict_key(reviewer, key, c.id) in mine for c in rubric.criteria)
        items.append(PanelItem(key, response, len(rubric.criteria), graded, rubric.approved))
    return items


def load_response(store: RunStore, response_key: str) -> Response | None:
    return store.get(stages.EVAL_RESPONSE, response_key, Response)


def existing_verdicts(
    store: RunStore, reviewer: str, response_key: str, rubric: Rubric
) -> dict[str, Verdict]:
    found: dict[str, Verdict] = {}
    for criterion in rubric.criteria:
        verdict = store.get(
            stages.PANEL_VERDICT, verdict_key(reviewer, response_key, criterion.id), Verdict
        )
        if verdict is not None:
            found[criterion.id] = verdict
    return found


def save_verdicts(
    store: RunStore,
    reviewer: str,
    response_key: str,
    rubric: Rubric,
    values: dict[str, bool],
    rationales: dict[str, str],
) -> list[str]:
    """Store the given verdicts (blank criteria stay pending); returns the ids saved."""
    known = {c.id for c in rubric.criteria}
    unknown = set(values) - known
    if unknown:
        raise ValueError(f"criteria not in the rubric: {sorted(unknown)}")
    saved: list[str] = []
    for criterion in rubric.criteria:
        if criterion.id not in values:
            continue
        verdict = Verdict(
            criterion_id=criterion.id,
            value=values[criterion.id],
            rationale=rationales.get(criterion.id, "").strip(),
            grader=reviewer,
        )
        store.put(stages.PANEL_VERDICT, verdict_key(reviewer, response_key, criterion.id), verdict)
        saved.append(criterion.id)
    return saved
