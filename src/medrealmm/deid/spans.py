"""Typed spans: what a recognizer found, where, and how it is masked."""

from __future__ import annotations

from bisect import bisect_right
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


# When two spans overlap, the longer wins; on a tie, the more specific type does. A record or
# order number outranks a phone: only a label types a number so, while a phone recognizer
# goes by its digits alone (住院号码是0000169734, ID号 4008828194).
_TYPE_RANK = {
    t: i
    for i, t in enumerate(
        [
            EntityType.EMAIL,
            EntityType.URL,
            EntityType.ID,
            EntityType.MRN,
            EntityType.ORDER_ID,
            EntityType.PHONE,
            EntityType.DATE,
            EntityType.HOSPITAL,
            EntityType.ORG,
            EntityType.ADDRESS,
            EntityType.NAME,
        ]
    )
}


def resolve_overlaps(spans: Iterable[Span]) -> list[Span]:
    """Keep a non-overlapping subset, preferring long spans, then specific types.

    Candidates are taken in that order; the kept spans stay sorted by start and never overlap,
    so their ends are sorted too and a candidate can only overlap its two neighbours there,
    found by bisection: a long text costs n log n, not one comparison per pair."""
    starts: list[int] = []
    ends: list[int] = []
    chosen: list[Span] = []
    # The order and the overlap test spelled out on the fields: a property or method call per
    # span and comparison was most of this loop's cost.
    for span in sorted(spans, key=lambda s: (s.start - s.end, _TYPE_RANK[s.type], s.start)):
        start, end = span.start, span.end
        i = bisect_right(starts, start)
        if i and starts[i - 1] < end and start < ends[i - 1]:
            continue
        if i < len(chosen) and starts[i] < end and start < ends[i]:
            continue
        starts.insert(i, start)
        ends.insert(i, end)
        chosen.insert(i, span)
    return chosen


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
