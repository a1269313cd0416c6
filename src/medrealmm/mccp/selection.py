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


#: Fewest turns between two challenge points of one consultation: a later point's context
#: holds the earlier point's target, so points closer than this would share most of a reply.
DEFAULT_MIN_GAP = 4


def select_challenge_points(
    judgements: Sequence[CandidateJudgement], points: int = 1, min_gap: int = DEFAULT_MIN_GAP
) -> list[CandidateJudgement]:
    """Up to ``points`` admitted candidates by the same ranking as t* (s_A + s_M, ties to the
    earliest t), each at least ``min_gap`` turns from every one taken before it; in turn order.

    The first is always t* (``select_t_star``), so ``points=1`` is the paper's rule. Greedy by
    rank: the strongest challenge points are kept and weaker ones too close to them dropped.
    """
    if points < 1:
        raise ValueError(f"points must be at least 1; got {points}")
    if min_gap < 1:
        raise ValueError(f"min_gap must be at least 1 turn; got {min_gap}")
    best = select_t_star(judgements)
    if best is None:
        return []
    chosen = [best]
    ranked = sorted((j for j in judgements if j.admitted), key=lambda j: (-j.total, j.t))
    for judgement in ranked:
        if len(chosen) == points:
            break
        if all(abs(judgement.t - c.t) >= min_gap for c in chosen):
            chosen.append(judgement)
    return sorted(chosen, key=lambda j: j.t)


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
