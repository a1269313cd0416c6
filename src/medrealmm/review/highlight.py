"""Split text into plain and masked-placeholder segments so masked spans can be highlighted."""

from __future__ import annotations

import re

from markupsafe import Markup, escape

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
