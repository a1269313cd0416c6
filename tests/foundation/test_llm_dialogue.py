"""The one dialogue-to-prompt path: image markers, inline pixels, the template slot, the rule."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from medrealmm.llm import (
    ImagePart,
    OfflineClient,
    TextPart,
    dialogue_messages,
    dialogue_parts,
    dialogue_text,
    resolve_spec,
    send_pixels,
)
from medrealmm.llm.dialogue import WITHHELD_IMAGE
from medrealmm.schema import Event, ImageOrigin, ImageRef, Sender


def _events(root: Path) -> list[Event]:
    (root / "img").mkdir()
    (root / "img" / "a.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    t = datetime(2025, 1, 1)
    return [
        Event(sender=Sender.PATIENT, timestamp=t, content="脚痒两周"),
        Event(sender=Sender.PHYSICIAN, timestamp=t, content="请发照片"),
        Event(
            sender=Sender.PATIENT,
            timestamp=t,
            content="照片",
            images=[
                ImageRef(path="img/a.png", origin=ImageOrigin.PATIENT),
                ImageRef(path="img/a.png", origin=ImageOrigin.PATIENT, kind="sticker"),
            ],
        ),
        Event(sender=Sender.PATIENT, timestamp=t, content="还有一张"),
    ]


def test_pixels_follow_their_numbered_marker(tmp_path: Path) -> None:
    parts = dialogue_parts(_events(tmp_path), image_root=tmp_path)
    kinds = [type(p) for p in parts]
    assert kinds == [TextPart, ImagePart, TextPart]
    head, image, tail = parts
    assert isinstance(head, TextPart) and head.text.endswith("[3] 患者：照片\n[图片1（患者上传）]")
    assert isinstance(image, ImagePart) and image.url.startswith("data:image/png;base64,")
    assert isinstance(tail, TextPart) and tail.text.startswith("[表情/贴图]\n[4] 患者：还有一张")


def test_without_pixels_each_marker_says_the_picture_is_not_shown(tmp_path: Path) -> None:
    events = _events(tmp_path)
    (part,) = dialogue_parts(events, image_root=None)
    assert isinstance(part, TextPart)
    assert f"[图片1（患者上传）：{WITHHELD_IMAGE}]" in part.text and "[表情/贴图]" in part.text
    text = dialogue_text(events)  # for people: markers only
    assert "[3] 患者：照片 [图片1（患者上传）] [表情/贴图]" in text and WITHHELD_IMAGE not in text


def test_dialogue_lands_inline_in_the_template_slot() -> None:
    image = ImagePart(url="data:image/png;base64,AA==")
    parts = [TextPart(text="[1] 患者：看看"), image, TextPart(text="完")]
    system, user = dialogue_messages("medrealmm.evaluate", "respond", parts, department="皮肤科")
    assert system.role == "system" and user.role == "user"
    kinds = [type(part) for part in user.content]
    assert kinds == [TextPart, ImagePart, TextPart]  # template text merged around the image
    head, _, tail = user.content
    assert isinstance(head, TextPart) and head.text.startswith("科室：皮肤科")
    assert head.text.endswith("[1] 患者：看看")
    assert isinstance(tail, TextPart) and tail.text.startswith("完")


def test_text_only_dialogue_is_one_text_part() -> None:
    (_, user) = dialogue_messages(
        "medrealmm.evaluate", "respond", [TextPart(text="x")], department="d"
    )
    assert len(user.content) == 1 and "x" in user.plain_text


def test_a_template_without_the_dialogue_slot_is_refused() -> None:
    with pytest.raises(ValueError, match="dialogue"):
        dialogue_messages("medrealmm.deid", "text_llm", [TextPart(text="x")], turns=[])


def test_pixels_go_only_when_wanted_and_the_model_reads_images() -> None:
    text_only = resolve_spec("gpt-x").model_copy(update={"vision": False})
    assert send_pixels(OfflineClient(), wanted=True)
    assert not send_pixels(OfflineClient(), wanted=False)
    assert not send_pixels(text_only, wanted=True)
