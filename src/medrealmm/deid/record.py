"""What de-identification did to one consultation: kept for the review app's residual-PII
pass (which highlights every masked span and box) and for measuring the maskers."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.deid.spans import Span

Box = tuple[int, int, int, int]


class TurnRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event: int = Field(ge=0)
    spans: list[Span] = Field(default_factory=list)


class ImageBox(BaseModel):
    """A solid black rectangle drawn on an image; ``kind`` says which detector asked for it."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    box: Box
    label: str | None = Field(default=None, description="Entity type for OCR text boxes.")


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
