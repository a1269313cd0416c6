"""Structured physician feedback F^(k) on one rubric round (paper 3.3).

A round's feedback is a list of items, each tied to a criterion id where it concerns one.
An empty list is the physician's approval: the loop ends and the round becomes R*.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from medrealmm.schema import CriterionKind, Rubric
from medrealmm.schema.rubric import check_weight


class FeedbackType(StrEnum):
    MISSING_CRITERION = "missing_criterion"  # add: text + weight
    WRONG_WEIGHT = "wrong_weight"  # criterion_id + the corrected weight
    SPLIT_CRITERION = "split_criterion"  # criterion_id + parts (>= 2, text + weight each)
    REFERENCE_SPECIFIC = "reference_specific"  # criterion_id (+ optional suggested text)
    UNSAFE_OMISSION = "unsafe_omission"  # add a safety criterion: text + weight
    REMOVE_CRITERION = "remove_criterion"  # criterion_id


#: Types that name an existing criterion, and types that add a new one.
TARGETED = frozenset(
    {
        FeedbackType.WRONG_WEIGHT,
        FeedbackType.SPLIT_CRITERION,
        FeedbackType.REFERENCE_SPECIFIC,
        FeedbackType.REMOVE_CRITERION,
    }
)
ADDING = frozenset({FeedbackType.MISSING_CRITERION, FeedbackType.UNSAFE_OMISSION})
#: A rule criterion's text is written by code from its rule, so only these apply to it.
RULE_EDITS = frozenset({FeedbackType.WRONG_WEIGHT, FeedbackType.REMOVE_CRITERION})


class SplitPart(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    weight: int

    @field_validator("weight")
    @classmethod
    def _weight(cls, value: int) -> int:
        return check_weight(value)


class FeedbackItem(BaseModel):
    """One physician remark; which fields are required depends on ``type``."""

    model_config = ConfigDict(extra="forbid")

    type: FeedbackType
    criterion_id: str | None = None
    text: str | None = Field(
        default=None, description="New criterion text (add types) or suggested rewording."
    )
    weight: int | None = None
    parts: list[SplitPart] = Field(default_factory=list)
    comment: str = ""
    #: Who gave this item and when: a round's items come from every physician who gave
    #: feedback on it (``rounds.save_feedback`` appends, never replaces); filled on saving.
    reviewer: str | None = None
    submitted_at: datetime | None = None

    @field_validator("weight")
    @classmethod
    def _weight(cls, value: int | None) -> int | None:
        return None if value is None else check_weight(value)

    @model_validator(mode="after")
    def _fields_match_type(self) -> FeedbackItem:
        kind = self.type
        if kind in TARGETED and not self.criterion_id:
            raise ValueError(f"{kind.value} needs criterion_id")
        if kind in ADDING:
            if self.criterion_id:
                raise ValueError(f"{kind.value} adds a criterion and takes no criterion_id")
            if not (self.text and self.text.strip()) or self.weight is None:
                raise ValueError(f"{kind.value} needs the new criterion's text and weight")
        if kind is FeedbackType.WRONG_WEIGHT and self.weight is None:
            raise ValueError("wrong_weight needs the corrected weight")
        if kind is FeedbackType.SPLIT_CRITERION and len(self.parts) < 2:
            raise ValueError("split_criterion needs at least two parts")
        if kind is not FeedbackType.SPLIT_CRITERION and self.parts:
            raise ValueError("only split_criterion takes parts")
        return self


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


#: The fields that say who gave an item, not what it asks: left out of the Refiner's prompt.
ATTRIBUTION = frozenset({"reviewer", "submitted_at"})


class RoundFeedback(BaseModel):
    """F^(k) for one instance's round k; ``items == []`` approves the round. ``reviewer`` and
    ``submitted_at`` are the first submission's; each item names its own reviewer."""

    model_config = ConfigDict(extra="forbid")

    instance_id: str = Field(min_length=1)
    round: int = Field(ge=0)
    reviewer: str = Field(min_length=1)
    submitted_at: datetime = Field(default_factory=_now)
    items: list[FeedbackItem] = Field(default_factory=list)
    note: str = ""

    @property
    def approves(self) -> bool:
        return not self.items


class FeedbackError(ValueError):
    """Feedback that does not fit the rubric it is about; ``index`` is the item's position."""

    def __init__(self, index: int | None, field: str, message: str) -> None:
        self.index = index
        self.field = field
        self.message = message
        where = f"items[{index}].{field}" if index is not None else field
        super().__init__(f"{where}: {message}")


def check_feedback(rubric: Rubric, feedback: RoundFeedback) -> None:
    """Reject feedback the Refiner could not apply: unknown ids, double targets, rule splits."""
    if feedback.instance_id != rubric.instance_id:
        raise FeedbackError(None, "instance_id", f"rubric is for {rubric.instance_id!r}")
    if feedback.round != rubric.round:
        raise FeedbackError(None, "round", f"the rubric under review is round {rubric.round}")
    by_id = {c.id: c for c in rubric.criteria}
    structural: dict[str, int] = {}
    reweighted: dict[str, int] = {}
    for index, item in enumerate(feedback.items):
        if item.criterion_id is None:
            continue
        if item.type is FeedbackType.WRONG_WEIGHT:
            if item.criterion_id in reweighted:
                raise FeedbackError(
                    index,
                    "criterion_id",
                    f"{item.criterion_id} is already given a weight by item "
                    f"{reweighted[item.criterion_id]}",
                )
            reweighted[item.criterion_id] = index
        criterion = by_id.get(item.criterion_id)
        if criterion is None:
            known = ", ".join(by_id)
            raise FeedbackError(
                index, "criterion_id", f"no criterion {item.criterion_id!r} (known: {known})"
            )
        if item.type in (FeedbackType.SPLIT_CRITERION, FeedbackType.REMOVE_CRITERION):
            if item.criterion_id in structural:
                raise FeedbackError(
                    index,
                    "criterion_id",
                    f"{item.criterion_id} is already split or removed by item "
                    f"{structural[item.criterion_id]}",
                )
            structural[item.criterion_id] = index
        if criterion.kind is CriterionKind.RULE and item.type not in RULE_EDITS:
            raise FeedbackError(
                index, "type", "a rule-based criterion can only be reweighted or removed"
            )
    for index, item in enumerate(feedback.items):
        owner = structural.get(item.criterion_id or "")
        if owner is not None and owner != index:
            raise FeedbackError(
                index,
                "criterion_id",
                f"{item.criterion_id} is split or removed by item {owner}; "
                "give the parts' weights and wording there",
            )
