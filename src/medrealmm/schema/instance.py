"""A benchmark instance x = C<=t* with its hidden target y = c_{t*+1} (paper 3.2)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from medrealmm.schema.consultation import Event, Sender


class AgentJudgement(BaseModel):
    """One agent's (l, s) for a candidate turn."""

    model_config = ConfigDict(extra="forbid")

    label: bool
    score: float
    reason: str = ""


class Instance(BaseModel):
    """What an evaluated model sees (``context``) plus what only rubric generation may see."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    consultation_id: str = Field(min_length=1)
    department: str
    subspecialty: str | None = None
    t_star: int = Field(ge=0, description="0-based index of the last context event.")
    context: list[Event] = Field(min_length=1)
    target_reply: str = Field(description="y_orig. Never shown to evaluated models or graders.")
    intent: str | None = None
    stage: str | None = None
    cropper: AgentJudgement | None = None
    verifier: AgentJudgement | None = None
    consultation_turns: int | None = Field(
        default=None,
        ge=1,
        description="T: events in the whole consultation, so t* can be placed early, middle "
        "or late (several challenge points per consultation). None in older runs.",
    )

    @model_validator(mode="after")
    def _ends_on_patient_turn(self) -> Instance:
        if self.context[-1].sender is not Sender.PATIENT:
            raise ValueError("an instance's context must end on the patient turn e_t*")
        if self.t_star != len(self.context) - 1:
            raise ValueError("t_star must index the last context event")
        return self

    @property
    def image_count(self) -> int:
        return sum(len(event.patient_medical_images) for event in self.context)

    @property
    def turn_count(self) -> int:
        return len(self.context)

    @property
    def position(self) -> str | None:
        return position_of(self.t_star, self.consultation_turns)


def position_of(t_star: int, consultation_turns: int | None) -> str | None:
    """Where t* falls in the consultation, by thirds of its T events: 'early', 'middle' or
    'late'; None when T was not recorded."""
    if consultation_turns is None:
        return None
    third = 3 * (t_star + 1) / consultation_turns
    return "early" if third <= 1 else "middle" if third <= 2 else "late"
