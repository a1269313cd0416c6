"""A streamed chat completion made whole: the server-sent events of ``stream: true`` read into
the same JSON body a plain call returns, with the time its first token arrived.

Both transports (``medrealmm.llm.transport``) feed their chunks here, so a streamed reply is
parsed by the one ``parse_completion`` and cannot differ from the plain reply in content or
token accounting: usage comes from the final chunk (``stream_options.include_usage``), or, for
a server that sends none, output tokens are counted one per content-bearing chunk and the
prompt's tokens are unknown (None, recorded as such, never 0).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

#: What a stream request adds to the plain payload: usage in the final chunk.
STREAM_FIELDS: dict[str, Any] = {"stream": True, "stream_options": {"include_usage": True}}


class StreamResult(NamedTuple):
    """A reply's JSON body (as ``post_chat`` returns it) and how its first token came.

    ``first_token_s`` is None when no token was streamed; ``note`` then says why.
    ``streamed`` is False when the server answered with one whole body instead of a stream.
    """

    data: object
    first_token_s: float | None
    note: str | None = None
    streamed: bool = True


class StreamError(Exception):
    """The server sent an error event in the middle of a stream (``{"error": {...}}``)."""


@dataclass
class ChunkAssembler:
    """Folds ``chat.completion.chunk`` objects into one ``chat.completion`` body.

    ``started`` is ``time.perf_counter()`` when the request went out; the first chunk whose
    delta carries answer text (``content`` or ``refusal``; a role-only or reasoning delta is
    not the answer) fixes the time to first token.
    """

    started: float
    first_token_s: float | None = None
    finished: bool = False  # a finish_reason arrived (the SDK never shows [DONE])
    _content: list[str] = field(default_factory=list)
    _refusal: list[str] = field(default_factory=list)
    _finish_reason: str | None = None
    _model: str | None = None
    _usage: dict[str, Any] | None = None
    _token_chunks: int = 0

    def add(self, chunk: object) -> None:
        if not isinstance(chunk, dict):
            raise ValueError(f"a stream chunk that is not an object: {str(chunk)[:80]!r}")
        error = chunk.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else None
            raise StreamError(str(message or error)[:2000])
        self._model = chunk.get("model") or self._model
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            carried = False
            for key, parts in (("content", self._content), ("refusal", self._refusal)):
                text = delta.get(key)
                if text:
                    parts.append(str(text))
                    carried = True
            if carried:
                self._token_chunks += 1
                if self.first_token_s is None:
                    self.first_token_s = time.perf_counter() - self.started
            if choice.get("finish_reason"):
                self._finish_reason = choice["finish_reason"]
                self.finished = True

    def body(self, model: str) -> dict[str, Any]:
        """The plain ``chat.completion`` this stream amounts to."""
        # no usage chunk: the prompt's tokens are unknown (None), the output's are counted
        usage = self._usage or {"prompt_tokens": None, "completion_tokens": self._token_chunks}
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content)}
        if self._refusal:
            message["refusal"] = "".join(self._refusal)
        return {
            "object": "chat.completion",
            "model": self._model or model,
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish_reason}],
            "usage": usage,
        }

    def result(self, model: str) -> StreamResult:
        if not self.finished:
            # A cut stream is a cut body: the same failure as a plain reply cut short.
            raise ValueError("the stream ended before its finish_reason")
        note = None if self.first_token_s is not None else "the streamed reply carried no token"
        return StreamResult(self.body(model), self.first_token_s, note)


@dataclass
class SSEDecoder:
    """Server-sent events, one line at a time: yields each event's ``data`` when it ends."""

    _data: list[str] = field(default_factory=list)

    def line(self, raw: bytes | str) -> str | None:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        text = text.rstrip("\r\n")
        if not text:
            return self.flush()
        if text.startswith(":"):
            return None  # a comment (keep-alive)
        name, _, value = text.partition(":")
        if name == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return None

    def flush(self) -> str | None:
        if not self._data:
            return None
        data, self._data = "\n".join(self._data), []
        return data


def is_event_stream(content_type: str | None) -> bool:
    return (content_type or "").split(";")[0].strip().lower() == "text/event-stream"


def not_streamed_note(content_type: str | None) -> str:
    return (
        f"the server answered a stream request with one whole body ({content_type or 'no'} "
        "content type): it does not stream, so no time to first token"
    )
