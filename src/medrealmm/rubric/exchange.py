"""File round trip with physicians: export the rounds awaiting review, import their feedback.

``export_round`` writes two JSONL files: review packets (case context, y_orig, criteria with
overlap scores and the changes since the previous round) and a feedback template, one line
per case, that physicians fill in (``items: []`` approves). ``import_feedback`` checks every
line against the store before saving any, so a bad file changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from medrealmm.io import DataError, atomic_writer, write_jsonl
from medrealmm.llm import dialogue_text
from medrealmm.rubric.diff import diff_rubrics
from medrealmm.rubric.feedback import FeedbackError, RoundFeedback
from medrealmm.rubric.overlap import OVERLAP_TAG, overlap_scores
from medrealmm.rubric.rounds import pending_review, round_history, save_feedback, validate_feedback
from medrealmm.rubric.settings import RubricSettings
from medrealmm.schema import Instance
from medrealmm.store import RunStore, stages


class ReviewCriterion(BaseModel):
    id: str
    text: str
    weight: int
    kind: str
    reference_overlap: float | None = None
    flagged: bool = False


class ReviewPacket(BaseModel):
    """Everything a physician needs to review one round of one case."""

    model_config = ConfigDict(extra="forbid")

    instance_id: str
    round: int
    department: str
    subspecialty: str | None = None
    dialogue: str
    images: list[str] = Field(default_factory=list)
    reference_reply: str
    criteria: list[ReviewCriterion]
    changes: list[str] = Field(default_factory=list, description="Diff from the previous round.")


def review_packets(store: RunStore, settings: RubricSettings) -> list[ReviewPacket]:
    packets = []
    withdrawn = store.keys(stages.RELEASE_WITHDRAWN)
    for rubric in pending_review(store):
        instance = store.get(stages.MCCP_INSTANCE, rubric.instance_id, Instance)
        if instance is None or instance.consultation_id in withdrawn:
            continue
        scores = overlap_scores(rubric, instance.target_reply, settings)
        rounds = round_history(store, rubric.instance_id)
        changes = diff_rubrics(rounds[-2], rounds[-1]).lines() if len(rounds) > 1 else []
        packets.append(
            ReviewPacket(
                instance_id=instance.id,
                round=rubric.round,
                department=instance.department,
                subspecialty=instance.subspecialty,
                dialogue=dialogue_text(instance.context),
                images=[ref.path for e in instance.context for ref in e.images],
                reference_reply=instance.target_reply,
                criteria=[
                    ReviewCriterion(
                        id=c.id,
                        text=c.text,
                        weight=c.weight,
                        kind=c.kind.value,
                        reference_overlap=scores.get(c.id),
                        flagged=OVERLAP_TAG in c.tags,
                    )
                    for c in rubric.criteria
                ],
                changes=changes,
            )
        )
    return packets


def export_round(
    store: RunStore, packets_path: Path | str, template_path: Path | str, settings: RubricSettings
) -> int:
    """Write the review packets and the feedback template; returns how many cases await review."""
    packets = review_packets(store, settings)
    write_jsonl(packets_path, packets)
    with atomic_writer(template_path) as handle:
        for packet in packets:
            line = {"instance_id": packet.instance_id, "round": packet.round, "items": []}
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    store.refresh_kept()  # the folder's STALE marker, if any, described the files before
    return len(packets)


def import_feedback(
    store: RunStore, path: Path | str, *, reviewer: str | None = None
) -> list[RoundFeedback]:
    """Validate every line, then save them all; ``reviewer`` fills lines that name none."""
    path = Path(path)
    parsed: list[tuple[int, RoundFeedback]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(path, number, "<json>", f"not valid JSON: {exc.msg}") from None
            if isinstance(raw, dict) and not raw.get("reviewer") and reviewer:
                raw["reviewer"] = reviewer
            try:
                parsed.append((number, RoundFeedback.model_validate(raw)))
            except ValidationError as exc:
                raise DataError.from_validation(path, number, exc) from None
    seen: dict[tuple[str, int], int] = {}
    for number, feedback in parsed:
        key = (feedback.instance_id, feedback.round)
        if key in seen:
            raise DataError(path, number, "instance_id", f"duplicate of line {seen[key]}")
        seen[key] = number
    for number, feedback in parsed:
        _check_against_store(store, path, number, feedback)
    for _, feedback in parsed:
        save_feedback(store, feedback)
    return [feedback for _, feedback in parsed]


def _check_against_store(store: RunStore, path: Path, number: int, feedback: RoundFeedback) -> None:
    try:
        validate_feedback(store, feedback)
    except FeedbackError as exc:
        field = f"items.{exc.index}.{exc.field}" if exc.index is not None else exc.field
        raise DataError(path, number, field, exc.message) from None
