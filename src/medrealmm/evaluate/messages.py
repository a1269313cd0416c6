"""Render an agent's templates with a dialogue (text and images) dropped into one slot.

The templates stay plain Jinja2 files; the slot is rendered as a marker and replaced by the
message parts, so images land inline exactly where the template puts the dialogue.
"""

from __future__ import annotations

from typing import Any

from medrealmm.llm import Message, TextPart, render_messages
from medrealmm.llm.types import Part

_MARK = "\u0000DIALOGUE\u0000"


def _merge_text(parts: list[Part]) -> list[Part]:
    merged: list[Part] = []
    for part in parts:
        if isinstance(part, TextPart) and not part.text:
            continue
        if isinstance(part, TextPart) and merged and isinstance(merged[-1], TextPart):
            merged[-1] = TextPart(text=merged[-1].text + part.text)
        else:
            merged.append(part)
    return merged


def messages_with_parts(
    package: str, agent: str, *, slot: str, parts: list[Part], **variables: Any
) -> list[Message]:
    messages = render_messages(package, agent, **{slot: _MARK}, **variables)
    user = messages[-1]
    text = user.plain_text
    if text.count(_MARK) != 1:
        raise ValueError(f"template {package}/{agent}.user.j2 must use {{{{ {slot} }}}} once")
    head, tail = text.split(_MARK)
    content = _merge_text([TextPart(text=head), *parts, TextPart(text=tail)])
    return [*messages[:-1], Message(role="user", content=content)]
