"""Pydantic models shared by every phase."""

from medrealmm.schema.consultation import (
    Consultation,
    Event,
    ImageKind,
    ImageOrigin,
    ImageRef,
    Modality,
    Sender,
)
from medrealmm.schema.grading import (
    PHYSICIAN_REPLY_S,
    CaseScore,
    ReplyLatency,
    Response,
    Verdict,
    VerdictStatus,
)
from medrealmm.schema.instance import AgentJudgement, Instance
from medrealmm.schema.rubric import (
    MAX_WEIGHT,
    MIN_WEIGHT,
    Criterion,
    CriterionKind,
    MaxCharsRule,
    MinCharsRule,
    Rubric,
    RuleSpec,
)

__all__ = [
    "MAX_WEIGHT",
    "MIN_WEIGHT",
    "PHYSICIAN_REPLY_S",
    "AgentJudgement",
    "CaseScore",
    "Consultation",
    "Criterion",
    "CriterionKind",
    "Event",
    "ImageKind",
    "ImageOrigin",
    "ImageRef",
    "Instance",
    "MaxCharsRule",
    "MinCharsRule",
    "Modality",
    "ReplyLatency",
    "Response",
    "Rubric",
    "RuleSpec",
    "Sender",
    "Verdict",
    "VerdictStatus",
]
