"""Φ_img, Φ_cmpl and the stage-4a rule: pure functions, ``None`` means the case stays.

Each returns the first reason that applies, so every drop carries exactly one recorded cause.
"""

from __future__ import annotations

from fractions import Fraction

from medrealmm.corpus.config import CompletenessConfig, PrivacyConfig
from medrealmm.corpus.reasons import Drop, DropReason
from medrealmm.schema import Consultation, Sender


def image_filter(consultation: Consultation) -> Drop | None:
    """Keep only cases where the patient uploaded a medical image (origin from metadata)."""
    if consultation.patient_medical_images:
        return None
    uploaded = sum(len(event.images) for event in consultation.events)
    return _drop(consultation, DropReason.NO_PATIENT_IMAGE, f"images={uploaded} patient_medical=0")


def completeness_filter(consultation: Consultation, config: CompletenessConfig) -> Drop | None:
    turns = len(consultation.events)
    if turns < config.min_turns:
        return _drop(consultation, DropReason.TOO_FEW_TURNS, f"turns={turns}<{config.min_turns}")
    if turns > config.max_turns:
        return _drop(consultation, DropReason.TOO_MANY_TURNS, f"turns={turns}>{config.max_turns}")
    chars = consultation.total_chars
    if chars > config.max_chars:
        return _drop(consultation, DropReason.TOO_LONG, f"chars={chars}>{config.max_chars}")
    side, count = _dominant_side(consultation)
    if Fraction(count, turns) > Fraction(config.max_side_fraction).limit_denominator(10_000):
        return _drop(consultation, DropReason.ONE_SIDED, f"{side}={count}/{turns}")
    if _closed_by_refund(consultation, config) and not _has_diagnostic_exchange(
        consultation, config
    ):
        return _drop(consultation, DropReason.REFUND_CLOSE, "refund close, no diagnostic reply")
    return None


def privacy_rule(consultation: Consultation, config: PrivacyConfig) -> Drop | None:
    """Stage 4a by rule: an image category whose masking would erase the clinical signal."""
    blocked = set(config.categories)
    for ref in consultation.patient_medical_images:
        if ref.category in blocked:
            return _drop(consultation, DropReason.FACE_DEPENDENT, f"rule: category={ref.category}")
    return None


def _dominant_side(consultation: Consultation) -> tuple[str, int]:
    patient = sum(event.sender is Sender.PATIENT for event in consultation.events)
    physician = len(consultation.events) - patient
    return ("patient", patient) if patient >= physician else ("physician", physician)


def _closed_by_refund(consultation: Consultation, config: CompletenessConfig) -> bool:
    """The patient's last message asks to cancel or refund (a platform reply may follow)."""
    patient_messages = [e.content for e in consultation.events if e.sender is Sender.PATIENT]
    if not patient_messages:
        return False
    return any(keyword in patient_messages[-1] for keyword in config.refund_keywords)


def _has_diagnostic_exchange(consultation: Consultation, config: CompletenessConfig) -> bool:
    return any(
        keyword in event.content
        for event in consultation.events
        if event.sender is Sender.PHYSICIAN
        for keyword in config.diagnostic_keywords
    )


def _drop(consultation: Consultation, reason: DropReason, detail: str) -> Drop:
    return Drop.of(consultation.id, consultation.department, reason, detail)
