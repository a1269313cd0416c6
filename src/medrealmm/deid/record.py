"""What de-identification did to one consultation: kept for the review app's residual-PII
pass (which highlights every masked span and box) and for measuring the maskers.

The record sits beside the masked corpus, so it never holds an identifier's text: offsets
and type say where a placeholder came from, and a keyed hash (HMAC-SHA256 under a per-run
secret) lets a reviewer check that two spans hid the same string without revealing it.
"""

from __future__ import annotations

import hashlib
import hmac

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.deid.spans import EntityType, Span

Box = tuple[int, int, int, int]


def keyed_digest(text: str, secret: bytes) -> str:
    """HMAC-SHA256 of ``text``; without the run's secret it cannot be matched to a guess."""
    return hmac.new(secret, text.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


class MaskedSpan(BaseModel):
    """A masked span without its text: ``[start, end)`` of the original turn."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: int = Field(ge=0)
    end: int = Field(gt=0)
    type: EntityType
    source: str
    digest: str = Field(description="keyed_digest of the original text under the run secret.")

    @classmethod
    def of(cls, span: Span, secret: bytes) -> MaskedSpan:
        return cls(
            start=span.start,
            end=span.end,
            type=span.type,
            source=span.source,
            digest=keyed_digest(span.text, secret),
        )


class Suspect(BaseModel):
    """A span of the masked text the machine was unsure of, with its evidence."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: int = Field(ge=0)
    end: int = Field(gt=0)
    kind: str = Field(description="'vetoed', 'frame' or 'shape' ('proper_noun' in old records).")
    source: str = Field(description="What proposed it: 'lac_ner:PER', 'person_cue', 'label' ...")
    reason: str | None = Field(
        default=None,
        description="The evidence (deid.near_miss): a veto class ('public_figure' ...), "
        "'model', 'person_frame', 'care_frame', 'label_value', 'id_shape' or "
        "'continues_mask'; None only in records written before suspects carried it.",
    )


class TurnRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event: int = Field(ge=0)
    spans: list[MaskedSpan] = Field(default_factory=list)
    suspects: list[Suspect] = Field(
        default_factory=list,
        description="Near-misses left unmasked, in offsets of the masked turn (review shows them).",
    )


class ImageBox(BaseModel):
    """A solid black rectangle drawn on an image; ``kind`` says which detector asked for it."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    box: Box
    label: str | None = Field(default=None, description="Entity type for OCR text boxes.")
    polygon: list[tuple[int, int]] | None = Field(
        default=None, description="Rotated text: only this polygon (inside ``box``) is blacked."
    )


class ImageRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str
    output: str
    width: int
    height: int
    boxes: list[ImageBox] = Field(default_factory=list)
    metadata_stripped: bool = True
    face_detector: str = Field(description="Backend used, or 'unavailable'.")
    needs_review: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    near_misses: list[ImageBox] = Field(
        default_factory=list,
        description="OCR text left unmasked that the near-miss finder flags; outlined in "
        "review, never blacked. ``label`` says why: the suspect's reason (deid.near_miss).",
    )


class DeidRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    consultation_id: str
    turns: list[TurnRecord] = Field(default_factory=list)
    images: list[ImageRecord] = Field(default_factory=list)
    llm_model: str | None = None
    llm_ok: bool | None = None
    llm_error: str | None = None

    @property
    def span_count(self) -> int:
        return sum(len(turn.spans) for turn in self.turns)

    @property
    def box_count(self) -> int:
        return sum(len(image.boxes) for image in self.images)
