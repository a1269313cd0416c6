"""The one way a consultation enters a prompt: dialogue lines with images inline.

Every agent renders its template with the dialogue in one slot (``{{ dialogue }}``) and
``dialogue_messages`` drops the parts there, so each image lands right after its numbered
marker. Whether pixels go at all is decided by one rule, ``send_pixels``; without them each
marker says the picture is not shown. The with/without-image comparison therefore differs in
exactly one thing: whether pixels are sent.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from medrealmm.io.images import image_data_url, resolve_image
from medrealmm.llm.prompts import render, system_messages
from medrealmm.llm.types import ImagePart, Message, Part, TextPart
from medrealmm.schema import Event, ImageKind, ImageOrigin, ImageRef, Sender

SENDER_LABEL = {Sender.PATIENT: "患者", Sender.PHYSICIAN: "医生"}
ORIGIN_LABEL = {
    ImageOrigin.PATIENT: "患者",
    ImageOrigin.PHYSICIAN: "医生",
    ImageOrigin.PLATFORM: "平台",
}
WITHHELD_IMAGE = "图片内容未提供"
NON_MEDICAL_IMAGE = "[表情/贴图]"
DIALOGUE_SLOT = "dialogue"
_MARK = "\u0000DIALOGUE\u0000"


class ReadsImages(Protocol):
    """A client or a model spec: both say whether the model reads image parts."""

    vision: bool


def send_pixels(model: ReadsImages, wanted: bool) -> bool:
    """The one rule for attaching pixels: the caller wants them and the model reads images.

    A model that cannot read them gets the text-only dialogue, whose markers say so.
    """
    return wanted and model.vision


def _marker(number: int, ref: ImageRef) -> str:
    return f"图片{number}（{ORIGIN_LABEL[ref.origin]}上传）"


def _turns(events: Sequence[Event]) -> Iterator[tuple[str, list[tuple[ImageRef, int] | None]]]:
    """Each turn's line and its pictures: (medical image, number), or None for a sticker."""
    number = 0
    for index, event in enumerate(events, start=1):
        images: list[tuple[ImageRef, int] | None] = []
        for ref in event.images:
            if ref.kind is ImageKind.MEDICAL:
                number += 1
                images.append((ref, number))
            else:
                images.append(None)
        yield f"[{index}] {SENDER_LABEL[event.sender]}：{event.content.strip()}", images


def dialogue_text(events: Sequence[Event]) -> str:
    """Transcript for people (review pages, exports): numbered image markers, no pixels."""
    lines = []
    for line, images in _turns(events):
        markers = [NON_MEDICAL_IMAGE if i is None else f"[{_marker(i[1], i[0])}]" for i in images]
        lines.append(" ".join([line, *markers]).strip())
    return "\n".join(lines)


def dialogue_parts(events: Sequence[Event], *, image_root: Path | str | None) -> list[Part]:
    """The dialogue for a prompt: with ``image_root`` each medical image's pixels follow its
    marker; without, the marker says the picture is not shown."""
    parts: list[Part] = []
    buffer: list[str] = []
    for line, images in _turns(events):
        buffer.append(line)
        for image in images:
            if image is None:
                buffer.append(NON_MEDICAL_IMAGE)
                continue
            ref, number = image
            if image_root is None:
                buffer.append(f"[{_marker(number, ref)}：{WITHHELD_IMAGE}]")
                continue
            buffer.append(f"[{_marker(number, ref)}]")
            parts.append(TextPart(text="\n".join(buffer)))
            buffer.clear()
            parts.append(ImagePart(url=image_data_url(resolve_image(image_root, ref))))
    if buffer:
        parts.append(TextPart(text="\n".join(buffer)))
    return parts


def _merge_text(head: str, dialogue: list[Part], tail: str) -> list[Part]:
    """``head``, the dialogue and ``tail`` with each run of adjacent text joined into one part
    and empty text dropped; a part is made per run (the message goes out with every call)."""
    merged: list[Part] = []
    run = [head]
    for part in dialogue:
        if isinstance(part, TextPart):
            run.append(part.text)
            continue
        _flush(run, merged)
        merged.append(part)
    run.append(tail)
    _flush(run, merged)
    return merged


def _flush(run: list[str], merged: list[Part]) -> None:
    text = "".join(run)
    run.clear()
    if text:
        merged.append(TextPart(text=text))


def dialogue_messages(
    package: str, agent: str, dialogue: list[Part], **variables: Any
) -> list[Message]:
    """Render ``<package>/prompts/<agent>.*.j2`` with ``dialogue`` (from ``dialogue_parts``)
    in the user template's ``{{ dialogue }}`` slot, images inline where the slot is."""
    variables[DIALOGUE_SLOT] = _MARK
    text = render(package, agent, "user", **variables)
    if text.count(_MARK) != 1:
        raise ValueError(f"template {package}/{agent}.user.j2 must use {{{{ dialogue }}}} once")
    head, tail = text.split(_MARK)
    content = _merge_text(head, dialogue, tail)
    return [*system_messages(package, agent, **variables), Message(role="user", content=content)]
