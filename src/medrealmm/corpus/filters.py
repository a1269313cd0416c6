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
    ratio = Fraction(config.max_side_ratio).limit_denominator(10_000)
    if count > ratio * (turns - count):
        return _drop(consultation, DropReason.ONE_SIDED, f"{side}={count}/{turns}")
    if _closed_by_refund(consultation, config) and not _has_substantive_reply(consultation, config):
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
    """One of the patient's last messages asks to cancel or refund (a platform reply may follow).

    Several closing messages are read because patients often add a line after asking.
    """
    patient_messages = [e.content for e in consultation.events if e.sender is Sender.PATIENT]
    closing = patient_messages[-config.refund_tail_messages :]
    return any(keyword in text for text in closing for keyword in config.refund_keywords)


def _has_substantive_reply(consultation: Consultation, config: CompletenessConfig) -> bool:
    return any(
        is_substantive_reply(event.content, config)
        for event in consultation.events
        if event.sender is Sender.PHYSICIAN
    )


def is_substantive_reply(text: str, config: CompletenessConfig) -> bool:
    """Clinical content, not order handling or courtesy: a keyword alone (建议) decides nothing.

    A message about refunds or customer service never counts; otherwise what remains once
    courtesy phrases and punctuation are removed must reach ``substantive_min_chars``.
    """
    if any(keyword in text for keyword in config.administrative_keywords):
        return False
    for phrase in config.courtesy_phrases:
        text = text.replace(phrase, "")
    content = [ch for ch in text if ch.isalnum()]
    return len(content) >= config.substantive_min_chars


def _drop(consultation: Consultation, reason: DropReason, detail: str) -> Drop:
    return Drop.of(consultation.id, consultation.department, reason, detail)
