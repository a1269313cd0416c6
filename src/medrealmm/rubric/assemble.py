"""Turn model output into versioned rubrics: ids, the rule criterion, refinement checks.

The checks a Refiner reply must pass depend on the round it refines, so
``refiner_schema`` builds a per-call schema whose validator runs them; a reply that drops
a criterion or ignores a physician's weight is then rejected and retried like any other
malformed output.
"""

from __future__ import annotations

import re
from collections import Counter

from pydantic import model_validator

from medrealmm.rubric.drafts import GeneratorOutput, RefinerOutput
from medrealmm.rubric.feedback import ADDING, FeedbackType, RoundFeedback
from medrealmm.rubric.rules import LENGTH_TAG, case_length_limit, length_criterion
from medrealmm.rubric.settings import RubricSettings
from medrealmm.schema import Criterion, CriterionKind, Instance, Rubric

_NUMBERED = re.compile(r"^c(\d+)$")


def criterion_id(number: int) -> str:
    return f"c{number:02d}"


def next_number(used: set[str]) -> int:
    numbers = [int(m.group(1)) for cid in used if (m := _NUMBERED.match(cid.split(".")[0]))]
    return max(numbers, default=0) + 1


def rubric_from_generator(
    instance: Instance, output: GeneratorOutput, settings: RubricSettings
) -> Rubric:
    """R^(0): the model's criteria as c01.. plus the case's length limit as a rule criterion."""
    criteria = [
        Criterion(id=criterion_id(i), text=d.text, weight=d.weight, axis=d.axis)
        for i, d in enumerate(output.criteria, start=1)
    ]
    limit = case_length_limit(instance.target_reply, settings)
    criteria.append(
        length_criterion(criterion_id(len(criteria) + 1), limit, settings.length_weight)
    )
    return Rubric(instance_id=instance.id, round=0, criteria=criteria)


def check_refinement(previous: Rubric, feedback: RoundFeedback, output: RefinerOutput) -> None:
    """Raise ValueError when the reply does not carry out the feedback it was given."""
    known = {c.id for c in previous.criteria}
    counts = Counter(c.id for c in output.criteria if c.id is not None)
    unknown = sorted(set(counts) - known)
    if unknown:
        raise ValueError(f"ids {unknown} are not in the current round; new criteria use id null")
    removed = {i.criterion_id for i in feedback.items if i.type is FeedbackType.REMOVE_CRITERION}
    splits = {i.criterion_id: i for i in feedback.items if i.type is FeedbackType.SPLIT_CRITERION}
    for cid in sorted(known):
        n = counts.get(cid, 0)
        if cid in removed and n:
            raise ValueError(f"{cid} was to be removed but is still present")
        if cid in splits:
            want = sorted(p.weight for p in splits[cid].parts)
            got = sorted(c.weight for c in output.criteria if c.id == cid)
            if got != want:
                raise ValueError(
                    f"{cid} must be split into {len(want)} items with id {cid!r} and weights "
                    f"{want}; got {got}"
                )
        elif cid not in removed and n != 1:
            raise ValueError(f"{cid} must appear exactly once (found {n}); no feedback removes it")
    for item in feedback.items:
        if item.type is FeedbackType.WRONG_WEIGHT:
            got = [c.weight for c in output.criteria if c.id == item.criterion_id]
            if got != [item.weight]:
                raise ValueError(f"{item.criterion_id} must have weight {item.weight}; got {got}")
    adds = sum(1 for i in feedback.items if i.type in ADDING)
    new = sum(1 for c in output.criteria if c.id is None)
    if new < adds:
        raise ValueError(f"feedback asks for {adds} new criteria (id null); got {new}")


def refiner_schema(previous: Rubric, feedback: RoundFeedback) -> type[RefinerOutput]:
    class CheckedRefinerOutput(RefinerOutput):
        @model_validator(mode="after")
        def _follows_feedback(self) -> CheckedRefinerOutput:
            check_refinement(previous, feedback, self)
            return self

    return CheckedRefinerOutput


def rubric_from_refiner(previous: Rubric, output: RefinerOutput, used_ids: set[str]) -> Rubric:
    """R^(k+1) with stable ids: kept criteria keep theirs, split parts get ``cNN.1``, ``cNN.2``,
    new ones the next unused number (never one an earlier round used)."""
    by_id = {c.id: c for c in previous.criteria}
    counts = Counter(c.id for c in output.criteria if c.id is not None)
    used = set(used_ids) | set(by_id)
    number = next_number(used)
    part: Counter[str] = Counter()
    criteria: list[Criterion] = []
    for item in output.criteria:
        if item.id is None:
            cid = criterion_id(number)
            number += 1
            criteria.append(Criterion(id=cid, text=item.text, weight=item.weight, axis=item.axis))
            continue
        source = by_id[item.id]
        cid = item.id
        if counts[item.id] > 1:
            part[item.id] += 1
            cid = f"{item.id}.{part[item.id]}"
        if source.kind is CriterionKind.RULE:
            criteria.append(_reweighted_rule(source, item.weight))
            continue
        criteria.append(
            source.model_copy(
                update={
                    "id": cid,
                    "text": item.text,
                    "weight": item.weight,
                    "axis": item.axis or source.axis,  # a carried criterion keeps its axis
                }
            )
        )
    return Rubric(instance_id=previous.instance_id, round=previous.round + 1, criteria=criteria)


def _reweighted_rule(source: Criterion, weight: int) -> Criterion:
    """Rule text is tied to the rule and its sign, so code rewrites it, never the model."""
    if (
        LENGTH_TAG in source.tags
        and source.rule is not None
        and (weight > 0) != (source.weight > 0)
    ):
        return length_criterion(source.id, source.rule.limit, weight)
    return source.model_copy(update={"weight": weight})
