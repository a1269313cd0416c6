"""Backend-neutral request/response types: every agent speaks these, every backend answers them."""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: How the JSON schema of a structured call reaches the server, most to least enforced.
#: ``json_object_schema`` is ``{"type": "json_object", "schema": ...}`` (llama.cpp's server).
#: ``auto`` starts at the top and steps down once when the server rejects a mode.
#: (Here, not beside the client, so a model spec is read without importing the SDK.)
StructuredMode = Literal["auto", "json_schema", "json_object_schema", "json_object", "none"]

#: ``stream`` in a model's config: ``auto`` streams and falls back to plain requests for the
#: endpoint when the server refuses; ``True`` streams (a refusal is the call's failure);
#: ``False`` never streams.
StreamSetting = Literal["auto"] | bool

#: The HTTP layer a client sends through (``medrealmm.llm.transport``).
TransportName = Literal["openai-sdk", "http"]


class TextPart(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    """An inline image as a data URL (base64), the OpenAI multimodal wire form."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["image"] = "image"
    url: str

    @cached_property
    def digest(self) -> str:
        """sha256 of the data URL, once per part: a case's parts are shared by all its calls,
        so the cache key hashes each image once per case, not once per criterion."""
        return url_digest(self.url)

    @cached_property
    def json_url(self) -> bytes:
        """The URL as a JSON string literal in UTF-8, once per part: the bytes a request body
        carries for it, spliced into every call's body instead of re-escaped per criterion."""
        return json.dumps(self.url, ensure_ascii=False).encode()


def url_digest(url: str) -> str:
    """sha256 of an inline image's data URL (the cache key's stand-in for its bytes)."""
    return hashlib.sha256(url.encode("utf-8")).hexdigest()


Part = TextPart | ImagePart


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: list[Part]

    @classmethod
    def text(cls, role: Literal["system", "user", "assistant"], text: str) -> Message:
        return cls(role=role, content=[TextPart(text=text)])

    @property
    def plain_text(self) -> str:
        return "".join(part.text for part in self.content if isinstance(part, TextPart))

    @property
    def image_count(self) -> int:
        return sum(isinstance(part, ImagePart) for part in self.content)


class GenerationParams(BaseModel):
    """Decoding settings; ``None`` means 'the server's default'."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)


class ChatRequest(BaseModel):
    """One call. ``task`` names the agent (routes the offline baseline, labels accounting).

    ``inputs`` carries the structured variables the prompt was rendered from. The offline
    baseline reads them instead of parsing Chinese prose; they never enter the cache key
    because the rendered messages already determine the call.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    task: str = Field(min_length=1)
    messages: list[Message] = Field(min_length=1)
    params: GenerationParams = Field(default_factory=GenerationParams)
    json_schema: dict[str, Any] | None = None
    inputs: dict[str, Any] = Field(default_factory=dict, exclude=True)


class Usage(BaseModel):
    #: None: the server did not say (a stream without a usage chunk), never a made-up 0.
    prompt_tokens: int | None = 0
    completion_tokens: int = 0


class Completion(BaseModel):
    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    cached: bool = False
    latency_s: float = 0.0
    #: Seconds from sending to the first answer token, for a streamed reply; None otherwise.
    first_token_s: float | None = None
    #: Why ``first_token_s`` is None (not streamed, the server refused streaming, ...).
    first_token_note: str | None = None
    #: The server's ``finish_reason``; ``length`` means the reply was cut at ``max_tokens``.
    finish_reason: str | None = None
    #: HTTP requests this reply took, retries included (usage shows retry pressure).
    attempts: int = 1
    #: The server's ``refusal`` text, when it says the model declined.
    refusal: str | None = None

    @property
    def truncated(self) -> bool:
        """A cut reply is still the model's reply: graded as written, flagged in results."""
        return self.finish_reason == "length"

    @property
    def refused(self) -> bool:
        """The model declined: the server's refusal field, or its content filter stopped it."""
        return self.refusal is not None or self.finish_reason == "content_filter"


class LLMError(RuntimeError):
    """A call that failed for good (retries exhausted or a non-retryable error).

    ``reason`` groups failures for the CLI summary (see ``medrealmm.llm.failures``);
    ``permanent`` failures (bad request, unsupported feature, context length) are not
    re-asked by a plain rerun, transient ones (timeouts, 5xx, rate limits) are.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: str = "error",
        permanent: bool = False,
        status: int | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.permanent = permanent
        self.status = status
        self.attempts = attempts
