"""A chat-completion body as bytes, with each image's pre-encoded URL spliced in.

A case's images go out with every criterion call; JSON-escaping and UTF-8-encoding their
base64 anew each time was most of the client's CPU per image call. ``encode_body`` encodes
everything else with a short stand-in per image and splices the part's cached bytes
(``ImagePart.json_url``) where each stand-in landed: byte for byte what
``json.dumps(payload, ensure_ascii=False).encode()`` gives (``benchmarks/image_calls.py``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from medrealmm.llm.types import ImagePart

_STAND_IN = "\u0000image\u0000"  # JSON escapes the NULs: no text part can fake the literal
_STAND_IN_JSON = json.dumps(_STAND_IN).encode()


def plain_body(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode()


def encode_body(payload: dict[str, Any], images: Sequence[ImagePart] = ()) -> bytes:
    """``plain_body(payload)``, but an ``image_url`` whose URL is (the same object as) the
    URL of one of ``images`` is spliced from that part's cached bytes, not encoded again."""
    if not images:
        return plain_body(payload)
    cached = {id(part.url): part.json_url for part in images}  # the payload holds these objects
    spliced: list[bytes] = []
    messages = [_stand_in(message, cached, spliced) for message in payload.get("messages", ())]
    if not spliced:
        return plain_body(payload)
    pieces = plain_body({**payload, "messages": messages}).split(_STAND_IN_JSON)
    if len(pieces) != len(spliced) + 1:  # a string value equal to the stand-in: encode it all
        return plain_body(payload)
    body = [pieces[0]]
    for blob, piece in zip(spliced, pieces[1:], strict=True):
        body += (blob, piece)
    return b"".join(body)


def _stand_in(message: Any, cached: dict[int, bytes], spliced: list[bytes]) -> Any:
    """``message`` with each cached image URL replaced by the stand-in (a copy; the payload is
    resent unchanged on a retry), in the order the JSON encoder will meet them."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return message
    parts = []
    for part in content:
        image = part.get("image_url") if isinstance(part, dict) else None
        blob = cached.get(id(image.get("url"))) if isinstance(image, dict) else None
        if blob is None:
            parts.append(part)
            continue
        parts.append({**part, "image_url": {**image, "url": _STAND_IN}})
        spliced.append(blob)
    return {**message, "content": parts}
