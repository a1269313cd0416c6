"""``encode_body``: the plain JSON encoding, byte for byte, with image URLs spliced in."""

from __future__ import annotations

import json

from medrealmm.llm import ImagePart, Message, TextPart
from medrealmm.llm.openai_compat import to_openai_messages
from medrealmm.llm.wire import encode_body, plain_body


def _payload(messages: list[Message]) -> dict[str, object]:
    return {"model": "m", "messages": to_openai_messages(messages), "max_tokens": 8}


def test_spliced_body_equals_the_plain_encoding() -> None:
    images = [ImagePart(url=f"data:image/png;base64,QUJD{i}") for i in range(3)]
    user = Message(role="user", content=[TextPart(text="看"), images[0], images[1], images[2]])
    payload = _payload([Message.text("system", '评分 "引号"'), user])
    before = json.dumps(payload, ensure_ascii=False)
    assert encode_body(payload, images) == plain_body(payload)
    assert json.dumps(payload, ensure_ascii=False) == before  # the payload is left as it was


def test_a_text_equal_to_the_stand_in_falls_back_to_the_plain_encoding() -> None:
    image = ImagePart(url="data:image/png;base64,QUJD")
    user = Message(role="user", content=[TextPart(text="\u0000image\u0000"), image])
    payload = _payload([user])
    payload["messages"][0]["content"][0] = {"type": "text", "text": "\u0000image\u0000"}
    payload["extra"] = "\u0000image\u0000"
    assert encode_body(payload, [image]) == plain_body(payload)


def test_an_equal_url_that_is_another_object_is_encoded_not_spliced() -> None:
    image = ImagePart(url="data:image/png;base64,QUJD")
    twin = ImagePart(url="".join(["data:image/png;base64,", "QUJD"]))  # equal, not the same
    payload = _payload([Message(role="user", content=[twin])])
    assert encode_body(payload, [image]) == plain_body(payload)
