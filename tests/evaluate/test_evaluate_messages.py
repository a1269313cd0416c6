from __future__ import annotations

from medrealmm.evaluate.messages import messages_with_parts
from medrealmm.llm import ImagePart, TextPart


def test_dialogue_parts_land_inline_in_the_template_slot() -> None:
    image = ImagePart(url="data:image/png;base64,AA==")
    parts = [TextPart(text="[1] 患者：看看"), image, TextPart(text="完")]
    system, user = messages_with_parts(
        "medrealmm.evaluate", "respond", slot="dialogue", parts=parts, department="皮肤科"
    )
    assert system.role == "system" and user.role == "user"
    kinds = [type(part) for part in user.content]
    assert kinds == [TextPart, ImagePart, TextPart]  # template text merged around the image
    head, _, tail = user.content
    assert isinstance(head, TextPart) and head.text.startswith("科室：皮肤科")
    assert head.text.endswith("[1] 患者：看看")
    assert isinstance(tail, TextPart) and tail.text.startswith("完")


def test_text_only_dialogue_is_one_text_part() -> None:
    (_, user) = messages_with_parts(
        "medrealmm.evaluate", "respond", slot="dialogue", parts=[TextPart(text="x")], department="d"
    )
    assert len(user.content) == 1 and "x" in user.plain_text
