"""Knobs of the rubric phase, in one place so CLI, pipeline and review app agree."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.schema import MAX_WEIGHT, MIN_WEIGHT
from medrealmm.schema.rubric import TYPICAL_MAX_CRITERIA, TYPICAL_MIN_CRITERIA

#: What the prompts ask for; a rubric outside it is accepted with ``Rubric.size_warning``.
MIN_CRITERIA = TYPICAL_MIN_CRITERIA
MAX_CRITERIA = TYPICAL_MAX_CRITERIA
#: Round 0 is the Generator's; the paper refines three times (rounds 1..3).
DEFAULT_MAX_ROUNDS = 3


class RubricSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_rounds: int = Field(
        default=DEFAULT_MAX_ROUNDS, ge=0, description="Refinement rounds after round 0."
    )
    platform_char_limit: int = Field(
        default=500, gt=0, description="The platform's hard per-turn length limit (characters)."
    )
    length_factor: float = Field(
        default=2.0, gt=0, description="Case limit = this many times the online reply's length."
    )
    min_length_limit: int = Field(default=100, gt=0, description="Case limit never goes below.")
    length_weight: int = Field(default=-5, ge=MIN_WEIGHT, le=MAX_WEIGHT)
    overlap_n: int = Field(default=4, ge=2, description="Character n-gram size for overlap.")
    overlap_threshold: float = Field(
        default=0.5, gt=0, le=1, description="Share of a criterion's n-grams found in y_orig."
    )
    with_images: bool = Field(
        default=True, description="Send patient images to the Generator/Refiner (vision models)."
    )
