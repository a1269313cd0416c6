"""t* = argmax over admitted candidates of s_A + s_M, with a deterministic tie-break.

Multimodal relevance presupposes an image, so a candidate whose history C<=t holds no
patient-uploaded medical image is never admitted, whatever the Verifier said.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from medrealmm.schema import AgentJudgement

#: Sums closer than this count as a tie (scores arrive as decimal text from models).
TIE_TOLERANCE = 1e-6


class CandidateJudgement(BaseModel):
    """Both agents' view of one candidate t; ``verifier`` is None when the Cropper rejected t
    or C<=t holds no patient medical image (``patient_images``, counted from metadata)."""

    model_config = ConfigDict(extra="forbid")

    t: int
    cropper: AgentJudgement
    verifier: AgentJudgement | None = None
    patient_images: int = 0

    @property
    def admitted(self) -> bool:
        return (
            self.patient_images >= 1
            and self.cropper.label
            and self.verifier is not None
            and self.verifier.label
        )

    @property
    def total(self) -> float:
        return self.cropper.score + (self.verifier.score if self.verifier else 0.0)


NO_CANDIDATE = "no_candidate_turn"
NO_ENGAGEMENT = "no_clinical_engagement"
NO_PATIENT_IMAGE = "no_patient_image_before_t"
NO_RELEVANCE = "no_multimodal_relevance"


def select_t_star(judgements: Sequence[CandidateJudgement]) -> CandidateJudgement | None:
    """The admitted candidate with the highest s_A + s_M; ties go to the earliest t.

    Earliest wins because it is the first point where the challenge arises and leaves the
    most of the consultation unseen; any fixed rule would do, but it must not depend on
    the order the agents happened to answer in.
    """
    best: CandidateJudgement | None = None
    for judgement in sorted(judgements, key=lambda j: j.t):
        if not judgement.admitted:
            continue
        if best is None or judgement.total > best.total + TIE_TOLERANCE:
            best = judgement
    return best


def discard_reason(judgements: Sequence[CandidateJudgement]) -> str:
    """Why a consultation yielded no MCCP, naming the first criterion nothing passed."""
    if not judgements:
        return NO_CANDIDATE
    engaged = [j for j in judgements if j.cropper.label]
    if not engaged:
        return NO_ENGAGEMENT
    if not any(j.patient_images for j in engaged):
        return NO_PATIENT_IMAGE
    return NO_RELEVANCE
