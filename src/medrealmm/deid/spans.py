"""Typed spans: what a recognizer found, where, and how it is masked."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class EntityType(StrEnum):
    NAME = "NAME"
    ID = "ID"
    PHONE = "PHONE"
    EMAIL = "EMAIL"
    URL = "URL"
    ORDER_ID = "ORDER_ID"
    MRN = "MRN"
    HOSPITAL = "HOSPITAL"
    ORG = "ORG"  # an employer or a school
    ADDRESS = "ADDRESS"
    DATE = "DATE"

    @property
    def placeholder(self) -> str:
        return f"[{self.value}]"


class Span(BaseModel):
    """A half-open character range ``[start, end)`` of one text, with its type and source."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: int = Field(ge=0)
    end: int = Field(gt=0)
    type: EntityType
    text: str
    source: str = Field(description="Recognizer name, 'consistency' or 'llm'.")

    @property
    def length(self) -> int:
        return self.end - self.start

    def overlaps(self, other: Span) -> bool:
        return self.start < other.end and other.start < self.end


def words(text: str) -> list[str]:
    """Whitespace-separated word lists keep long Chinese vocabularies readable."""
    return text.split()


# When two spans overlap, the longer wins; on a tie, the more specific type does.
_TYPE_RANK = {
    t: i
    for i, t in enumerate(
        [
            EntityType.EMAIL,
            EntityType.URL,
            EntityType.ID,
            EntityType.PHONE,
            EntityType.MRN,
            EntityType.ORDER_ID,
            EntityType.DATE,
            EntityType.HOSPITAL,
            EntityType.ORG,
            EntityType.ADDRESS,
            EntityType.NAME,
        ]
    )
}


def resolve_overlaps(spans: Iterable[Span]) -> list[Span]:
    """Keep a non-overlapping subset, preferring long spans, then specific types."""
    chosen: list[Span] = []
    for span in sorted(spans, key=lambda s: (-s.length, _TYPE_RANK[s.type], s.start)):
        if not any(span.overlaps(kept) for kept in chosen):
            chosen.append(span)
    return sorted(chosen, key=lambda s: s.start)


def apply_placeholders(text: str, spans: Iterable[Span]) -> str:
    """Replace each (non-overlapping) span by its typed placeholder."""
    out: list[str] = []
    cursor = 0
    for span in sorted(spans, key=lambda s: s.start):
        if span.start < cursor:
            raise ValueError("spans overlap; resolve them first")
        out.append(text[cursor : span.start])
        out.append(span.type.placeholder)
        cursor = span.end
    out.append(text[cursor:])
    return "".join(out)
