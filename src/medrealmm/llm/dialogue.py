"""Render a consultation history as message parts, with images inline or as placeholders.

One renderer serves every agent, so the with/without-image comparison differs in exactly
one thing: whether pixels are sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from medrealmm.io.images import image_data_url, resolve_image
from medrealmm.llm.types import ImagePart, Part, TextPart
from medrealmm.schema import Event, ImageKind, ImageOrigin, ImageRef, Sender

SENDER_LABEL = {Sender.PATIENT: "患者", Sender.PHYSICIAN: "医生"}
WITHHELD_IMAGE = "[图片：此处为一张上传的医学图片，本次评测未提供图片内容]"
NON_MEDICAL_IMAGE = "[表情/贴图]"


ORIGIN_LABEL = {
    ImageOrigin.PATIENT: "患者",
    ImageOrigin.PHYSICIAN: "医生",
    ImageOrigin.PLATFORM: "平台",
}


def _image_label(number: int, ref: ImageRef) -> str:
    return f"[图片{number}（{ORIGIN_LABEL[ref.origin]}上传）]"


def dialogue_text(events: Sequence[Event]) -> str:
    """Text-only transcript with numbered image markers; used where pixels are not needed."""
    lines: list[str] = []
    number = 0
    for index, event in enumerate(events, start=1):
        markers = []
        for ref in event.images:
            if ref.kind is ImageKind.MEDICAL:
                number += 1
                markers.append(_image_label(number, ref))
            else:
                markers.append(NON_MEDICAL_IMAGE)
        body = " ".join([event.content.strip(), *markers]).strip()
        lines.append(f"[{index}] {SENDER_LABEL[event.sender]}：{body}")
    return "\n".join(lines)


def dialogue_parts(
    events: Sequence[Event], *, image_root: Path | str | None, with_images: bool
) -> list[Part]:
    """Interleave text and images in dialogue order, merging adjacent text into one part."""
    parts: list[Part] = []
    buffer: list[str] = []
    number = 0

    def flush() -> None:
        if buffer:
            parts.append(TextPart(text="\n".join(buffer)))
            buffer.clear()

    for index, event in enumerate(events, start=1):
        buffer.append(f"[{index}] {SENDER_LABEL[event.sender]}：{event.content.strip()}")
        for ref in event.images:
            if ref.kind is not ImageKind.MEDICAL:
                buffer.append(NON_MEDICAL_IMAGE)
                continue
            number += 1
            if with_images:
                if image_root is None:
                    raise ValueError("image_root is required when images are sent")
                buffer.append(_image_label(number, ref))
                flush()
                parts.append(ImagePart(url=image_data_url(resolve_image(image_root, ref))))
            else:
                buffer.append(f"{_image_label(number, ref)} {WITHHELD_IMAGE}")
    flush()
    return parts
