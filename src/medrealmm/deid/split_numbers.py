"""A number split over two turns of one speaker (手机号138 1234 / 5678): the tail of one turn
and the head of that speaker's next turn, read together, are one identifier.

Each turn alone holds a fragment no rule takes (seven digits, four digits); read as one they
are a mobile number or a resident ID (checksum), and both halves are masked. Runs at the
consultation level, after each turn's own pass, on the canonical reading of each turn.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence

from medrealmm.deid.checksum import is_resident_id
from medrealmm.deid.reading import canonical_reading
from medrealmm.deid.spans import EntityType, Span

_TAIL = re.compile(r"(?<![0-9A-Za-z.])(\d[\d \-]{1,20}\d|\d{2,})[ \t]*[,，.。]?[ \t]*$")
_HEAD = re.compile(r"^[ \t]*((?:\d[\d \-]{0,20})?\d[Xx]?)(?![0-9A-Za-z.])")
_MOBILE = re.compile(r"1[3-9]\d{9}")


def _kind(digits: str) -> EntityType | None:
    if _MOBILE.fullmatch(digits):
        return EntityType.PHONE
    if len(digits) in (15, 18) and is_resident_id(digits.upper()):
        return EntityType.ID
    return None


def _next_of_same(speakers: Sequence[Hashable] | None, i: int, count: int) -> int | None:
    """The index of the next turn of turn ``i``'s speaker; without speakers, the next turn."""
    if speakers is None:
        return i + 1 if i + 1 < count else None
    return next((j for j in range(i + 1, count) if speakers[j] == speakers[i]), None)


def split_numbers(
    texts: Sequence[str], speakers: Sequence[Hashable] | None = None
) -> list[list[Span]]:
    """Per turn, the halves of numbers split over two turns of one speaker (``speakers``:
    one value per turn; without them, each turn and the next)."""
    out: list[list[Span]] = [[] for _ in texts]
    for i, text in enumerate(texts):
        j = _next_of_same(speakers, i, len(texts))
        if j is None or not text or not texts[j]:
            continue
        first, second = canonical_reading(text), canonical_reading(texts[j])
        tail, head = _TAIL.search(first.text), _HEAD.match(second.text)
        if tail is None or head is None:
            continue
        left = re.sub(r"\D", "", tail.group(1))
        right = re.sub(r"[^\dXx]", "", head.group(1))
        kind = _kind(left + right)
        if kind is None or _kind(left) is not None or _kind(right) is not None:
            continue
        for k, reading, match in ((i, first, tail), (j, second, head)):
            start, end = reading.to_original(*match.span(1))
            original = texts[k]
            out[k].append(
                Span(
                    start=start,
                    end=end,
                    type=kind,
                    text=original[start:end],
                    source="split",
                )
            )
    return out
