"""Split text into plain and masked-placeholder segments so masked spans can be highlighted,
and mark the near-misses de-identification left unmasked (``deid.record.Suspect``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from markupsafe import Markup, escape

from medrealmm.deid.record import Suspect

# Typed placeholders written by de-identification: [NAME], [PHONE], [ID_NUMBER], [地址] ...
PLACEHOLDER = re.compile(r"\[(?:[A-Z][A-Z0-9_]*|[\u4e00-\u9fff]{1,8})\]")


def segments(text: str) -> list[tuple[str, bool]]:
    """(piece, is_placeholder) in order; joining the pieces gives back ``text``."""
    out: list[tuple[str, bool]] = []
    cursor = 0
    for match in PLACEHOLDER.finditer(text):
        if match.start() > cursor:
            out.append((text[cursor : match.start()], False))
        out.append((match.group(0), True))
        cursor = match.end()
    if cursor < len(text):
        out.append((text[cursor:], False))
    return out


def highlight_html(text: str) -> Markup:
    """HTML-escaped text with each placeholder wrapped in ``<mark class="masked">``."""
    parts = [
        Markup('<mark class="masked">{}</mark>').format(piece) if masked else escape(piece)
        for piece, masked in segments(text)
    ]
    return Markup("").join(parts)


def highlight_with_suspects(text: str, suspects: Sequence[Suspect]) -> Markup:
    """``highlight_html`` plus each near-miss wrapped in ``<mark class="suspect">`` with its
    kind as a title; suspects are outside placeholders, so the two never nest."""
    parts: list[Markup] = []
    cursor = 0
    for suspect in sorted(suspects, key=lambda s: s.start):
        if suspect.start < cursor or suspect.end > len(text):
            continue  # a stale record: never break the page over it
        parts.append(highlight_html(text[cursor : suspect.start]))
        parts.append(
            Markup('<mark class="suspect" title="{}">{}</mark>').format(
                SUSPECT_LABELS.get(suspect.kind, suspect.kind), text[suspect.start : suspect.end]
            )
        )
        cursor = suspect.end
    parts.append(highlight_html(text[cursor:]))
    return Markup("").join(parts)


SUSPECT_LABELS = {"vetoed": "模型提出但被规则否决", "proper_noun": "未遮盖的专有名词"}
