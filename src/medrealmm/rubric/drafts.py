"""What the Generator and Refiner must return; weight bounds are enforced here so a model's
out-of-bounds rubric is rejected and retried by ``complete_structured``.

The criterion count is not: 3-19 is the range the prompts ask for, and a rubric outside it
(a physician removed criteria, say) carries ``Rubric.size_warning`` instead of failing.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from medrealmm.rubric.settings import MAX_CRITERIA, MIN_CRITERIA
from medrealmm.schema.rubric import Axis, check_weight

#: The Generator writes the clinical criteria; code adds the rule-based length criterion,
#: so the model's share of the 3-19 bound is one smaller on each side.
GENERATOR_MIN = MIN_CRITERIA - 1
GENERATOR_MAX = MAX_CRITERIA - 1
#: The longest criterion the Generator and Refiner may write. A longer one is refused (the
#: call is retried, then the unit fails with this reason): a criterion is shown and shipped
#: whole, never cut to fit.
MAX_CRITERION_CHARS = 200


class CriterionDraft(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(
        min_length=4,
        description="One checkable clinical requirement, in Chinese, "
        f"at most {MAX_CRITERION_CHARS} characters.",
    )
    weight: int = Field(description="Signed importance: non-zero integer in [-20, 20].")
    axis: Axis | None = Field(
        default=None,
        description="What it measures: accuracy, completeness, context_awareness, "
        "communication or instruction_following.",
    )

    @field_validator("text")
    @classmethod
    def _strip(cls, value: str) -> str:
        value = value.strip()
        if len(value) < 4:
            raise ValueError("criterion text is too short")
        if len(value) > MAX_CRITERION_CHARS:
            raise ValueError(
                f"criterion text has {len(value)} characters, over the {MAX_CRITERION_CHARS} "
                "a criterion may have; write one shorter, checkable requirement"
            )
        return value

    @field_validator("weight")
    @classmethod
    def _weight(cls, value: int) -> int:
        return check_weight(value)


def _check_positive(weights: list[int]) -> None:
    if not any(w > 0 for w in weights):
        raise ValueError("a rubric needs at least one positive criterion (the score divides by it)")


class GeneratorOutput(BaseModel):
    model_config = ConfigDict(extra="forbid", title="GeneratorOutput")

    criteria: list[CriterionDraft] = Field(min_length=1)

    @model_validator(mode="after")
    def _has_positive(self) -> GeneratorOutput:
        _check_positive([c.weight for c in self.criteria])
        return self


class RefinedCriterion(CriterionDraft):
    id: str | None = Field(
        default=None,
        description="Id of the current-round criterion this item continues (kept, reworded, "
        "reweighted, or one part of a split); null for a new criterion.",
    )


class RefinerOutput(BaseModel):
    model_config = ConfigDict(extra="forbid", title="RefinerOutput")

    criteria: list[RefinedCriterion] = Field(min_length=1)

    @model_validator(mode="after")
    def _has_positive(self) -> RefinerOutput:
        _check_positive([c.weight for c in self.criteria])
        return self
