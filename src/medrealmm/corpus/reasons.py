"""Why a consultation left the corpus: one record per drop, counted in the manifest."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Operator(StrEnum):
    """The chain C0 -Φimg-> C1 -Φcmpl-> C2 -Φbal-> C3 -(4a)-> C3' of paper 3.1."""

    IMAGE = "image"
    COMPLETENESS = "completeness"
    BALANCE = "balance"
    PRIVACY = "privacy"


class DropReason(StrEnum):
    NO_PATIENT_IMAGE = "no_patient_image"
    TOO_FEW_TURNS = "too_few_turns"
    TOO_MANY_TURNS = "too_many_turns"
    TOO_LONG = "too_long"
    ONE_SIDED = "one_sided"
    REFUND_CLOSE = "refund_close"
    DEPARTMENT_CAP = "department_cap"
    FACE_DEPENDENT = "face_dependent"
    PRIVACY_SCREEN_FAILED = "privacy_screen_failed"


OPERATOR_OF = {
    DropReason.NO_PATIENT_IMAGE: Operator.IMAGE,
    DropReason.TOO_FEW_TURNS: Operator.COMPLETENESS,
    DropReason.TOO_MANY_TURNS: Operator.COMPLETENESS,
    DropReason.TOO_LONG: Operator.COMPLETENESS,
    DropReason.ONE_SIDED: Operator.COMPLETENESS,
    DropReason.REFUND_CLOSE: Operator.COMPLETENESS,
    DropReason.DEPARTMENT_CAP: Operator.BALANCE,
    DropReason.FACE_DEPENDENT: Operator.PRIVACY,
    DropReason.PRIVACY_SCREEN_FAILED: Operator.PRIVACY,
}


class Drop(BaseModel):
    """A dropped consultation. ``detail`` holds counts and rule names, never patient text."""

    model_config = ConfigDict(extra="forbid")

    consultation_id: str
    department: str
    operator: Operator
    reason: DropReason
    detail: str = ""

    @classmethod
    def of(cls, consultation_id: str, department: str, reason: DropReason, detail: str) -> Drop:
        return cls(
            consultation_id=consultation_id,
            department=department,
            operator=OPERATOR_OF[reason],
            reason=reason,
            detail=detail,
        )
