"""Case-specific rubric R = {(c_j, w_j)} with w_j in [-20, 20] minus {0} (paper 3.3)."""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MIN_WEIGHT = -20
MAX_WEIGHT = 20
#: The paper's rubrics hold 3-19 criteria (3.5). That range describes its data; outside it a
#: rubric is shown to the physician with a warning, never refused (docs/CHOICES.md).
TYPICAL_MIN_CRITERIA = 3
TYPICAL_MAX_CRITERIA = 19


def check_weight(value: int) -> int:
    if value == 0 or not MIN_WEIGHT <= value <= MAX_WEIGHT:
        raise ValueError(f"weight must be a non-zero integer in [{MIN_WEIGHT}, {MAX_WEIGHT}]")
    return value


class Axis(StrEnum):
    """What a criterion measures (HealthBench's axes), beside its polarity (the weight's
    sign). A criterion of a rubric made before axes were tagged has none: ``untagged``."""

    ACCURACY = "accuracy"
    COMPLETENESS = "completeness"
    CONTEXT_AWARENESS = "context_awareness"
    COMMUNICATION = "communication"
    INSTRUCTION_FOLLOWING = "instruction_following"


UNTAGGED = "untagged"
#: What a criterion's and a rubric's version leave out: labels that describe a criterion
#: without changing what a verdict on it means.
_UNVERSIONED = {"tags", "axis"}


class CriterionKind(StrEnum):
    LLM = "llm"
    RULE = "rule"


class MaxCharsRule(BaseModel):
    """The platform's per-turn length limit, checked in code without an LLM."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["max_chars"] = "max_chars"
    limit: int = Field(gt=0)


class MinCharsRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["min_chars"] = "min_chars"
    limit: int = Field(gt=0)


RuleSpec = Annotated[MaxCharsRule | MinCharsRule, Field(discriminator="type")]


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    weight: int
    kind: CriterionKind = CriterionKind.LLM
    rule: RuleSpec | None = None
    tags: list[str] = Field(default_factory=list)
    axis: Axis | None = None

    @field_validator("weight")
    @classmethod
    def _weight_in_bounds(cls, value: int) -> int:
        return check_weight(value)

    @model_validator(mode="after")
    def _rule_matches_kind(self) -> Criterion:
        if (self.kind is CriterionKind.RULE) != (self.rule is not None):
            raise ValueError("rule criteria need a rule spec, and only rule criteria may have one")
        return self

    @property
    def version(self) -> str:
        """A digest of what a verdict depends on (text, weight, kind, rule; not tags or axis):
        a verdict recorded under another version was given to a different criterion."""
        return _digest(self.model_dump(mode="json", exclude=_UNVERSIONED))


class Rubric(BaseModel):
    model_config = ConfigDict(extra="forbid")

    instance_id: str = Field(min_length=1)
    round: int = Field(default=0, ge=0)
    criteria: list[Criterion] = Field(min_length=1)
    approved: bool = False

    @model_validator(mode="after")
    def _unique_ids(self) -> Rubric:
        ids = [c.id for c in self.criteria]
        if len(ids) != len(set(ids)):
            raise ValueError("criterion ids must be unique within a rubric")
        return self

    @property
    def size_warning(self) -> str | None:
        """A note for the physician when the size is outside the paper's 3-19, else None."""
        n = len(self.criteria)
        if TYPICAL_MIN_CRITERIA <= n <= TYPICAL_MAX_CRITERIA:
            return None
        return (
            f"本量表有 {n} 条标准，超出论文中 {TYPICAL_MIN_CRITERIA}–{TYPICAL_MAX_CRITERIA} "
            "条的常见范围，请确认是否合适。"
        )

    @property
    def positive_total(self) -> int:
        return sum(max(c.weight, 0) for c in self.criteria)

    @property
    def version(self) -> str:
        """``r{round}[a]-{digest}``: the round, ``a`` when approved, and a digest of the
        criteria. A score whose rubric version differs from the applicable rubric's is stale."""
        return self._version(self._bodies())

    def versions(self) -> tuple[str, dict[str, str]]:
        """``version`` and every criterion's ``version`` by id, from one dump of the criteria:
        grading stamps both on each verdict."""
        blobs = [_blob(body) for body in self._bodies()]
        by_id = {c.id: _hash(blob) for c, blob in zip(self.criteria, blobs, strict=True)}
        # the list's JSON is its items' JSON joined by the separator: each dumped once
        return self._version_of(_hash("[" + ",".join(blobs) + "]")), by_id

    def _bodies(self) -> list[dict[str, object]]:
        """What a version hashes of each criterion (``Criterion.version``'s input)."""
        # one dump of the list, not one call per criterion: a report hashes every rubric
        dumped = self.model_dump(
            mode="json", include={"criteria"}, exclude={"criteria": {"__all__": _UNVERSIONED}}
        )
        return dumped["criteria"]  # type: ignore[no-any-return]

    def _version(self, bodies: list[dict[str, object]]) -> str:
        return self._version_of(_digest(bodies))

    def _version_of(self, digest: str) -> str:
        return f"r{self.round}{'a' if self.approved else ''}-{digest}"


def _digest(value: object) -> str:
    return _hash(_blob(value))


def _blob(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _hash(blob: str) -> str:
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]
