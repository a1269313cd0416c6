"""OpenAI-compatible backend (async): vLLM, SGLang, llama.cpp, Ollama, hosted APIs.

A transport (``medrealmm.llm.transport``: the official SDK or bare HTTP) carries auth,
timeouts and pooling; the request body and the reply are plain JSON handled here, because the
SDK's typed request transform and response parsing cost more CPU per call than everything else
in the harness together (see ``benchmarks/eval_throughput.py``). Retries, backoff and failure
classification live here, the same for both transports. Every failure leaves as an
``LLMError`` with a reason.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import sys
import time
from typing import Any

from medrealmm.llm.failures import classify, is_permanent, retry_after_s, tagged
from medrealmm.llm.transport import HTTPFailure, TransportName, make_transport
from medrealmm.llm.types import (
    ChatRequest,
    Completion,
    GenerationParams,
    ImagePart,
    LLMError,
    Message,
    StreamSetting,
    StructuredMode,
    TextPart,
    Usage,
)

log = logging.getLogger(__name__)

#: The structured modes ``auto`` steps down through (``types.StructuredMode``).
MODE_ORDER: tuple[StructuredMode, ...] = (
    "json_schema",
    "json_object_schema",
    "json_object",
    "none",
)

#: Reply budget when neither the request nor the model config sets ``max_tokens``: a bare
#: model id otherwise lets a small model ramble past the timeout.
DEFAULT_MAX_TOKENS: dict[str, int] = {
    "evaluate.grader": 512,
    "evaluate.respond": 1024,
    "rubric.generator": 2048,
    "rubric.refiner": 2048,
}
FALLBACK_MAX_TOKENS = 1024

#: The calls that stream when the model's ``stream`` setting allows: the evaluated model's
#: answer, whose time to first token is what a patient waits for. Graders and the pipeline's
#: agents are not timed, so they send plain requests. (``evaluate.respond.RESPOND_TASK``;
#: ``llm`` does not import ``evaluate``, a test pins the two together.)
STREAMED_TASKS = frozenset({"evaluate.respond"})

#: Statuses with which servers refuse a stream request (a 5xx other than 501 is the server's
#: trouble, retried as usual, not a refusal).
_STREAM_REJECTIONS = frozenset({400, 404, 405, 415, 422, 501})

STREAM_OFF_NOTE = "not streamed: stream is false in the model's config"

#: A timed-out call is sent once more, after the usual backoff, with its timeout this many
#: times longer (a slow reply gets room; a one-at-a-time server is not flooded with copies); a
#: second timeout is final and recorded as the failure ``timeout``.
TIMEOUT_RETRY_FACTOR = 2.0

#: Longest server-requested wait we honour before a retry; longer ones count as a failure.
MAX_RETRY_AFTER_S = 120.0

#: Statuses with which servers reject a ``response_format`` they do not support.
_FORMAT_REJECTIONS = frozenset({400, 422, 500, 501})

IMAGE_NOT_SENT = "[图片未发送：该模型不接收图片]"


def default_max_tokens(task: str) -> int:
    return DEFAULT_MAX_TOKENS.get(task, FALLBACK_MAX_TOKENS)


def to_openai_messages(messages: list[Message], *, vision: bool = True) -> list[dict[str, Any]]:
    """Text-only messages go as plain strings: some local servers reject content arrays.

    With ``vision`` off an image part becomes a short text marker, so a text-only model
    never receives pixels whatever the stage built.
    """
    wire: list[dict[str, Any]] = []
    for message in messages:
        has_image = any(isinstance(part, ImagePart) for part in message.content)
        if not has_image:
            wire.append({"role": message.role, "content": message.plain_text})
            continue
        if not vision:
            text = "".join(
                part.text if isinstance(part, TextPart) else f"\n{IMAGE_NOT_SENT}\n"
                for part in message.content
            )
            wire.append({"role": message.role, "content": text})
            continue
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, ImagePart):
                parts.append({"type": "image_url", "image_url": {"url": part.url}})
            else:
                parts.append({"type": "text", "text": part.text})
        wire.append({"role": message.role, "content": parts})
    return wire


def response_format(mode: StructuredMode, task: str, schema: dict[str, Any]) -> dict | None:
    if mode == "json_schema":
        name = task.replace(".", "_")[:64]
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


class RateLimiter:
    """Spaces request starts so no more than ``rpm`` begin in any minute."""

    def __init__(self, rpm: float | None) -> None:
        self._interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self._interval:
            return
        async with self._lock:
            now = time.monotonic()
            delay = self._next - now
            self._next = max(now, self._next) + self._interval
        if delay > 0:
            await asyncio.sleep(delay)


class _Malformed(Exception):
    """The server answered 200 with a body that is not a chat completion."""


def _tokens(value: object) -> int | None:
    """A token count the server gave, or None where it gave none (unknown, not 0)."""
    return None if value is None else int(value)  # type: ignore[call-overload]


def parse_completion(
    data: object,
    model: str,
    *,
    latency_s: float = 0.0,
    attempts: int = 1,
    first_token_s: float | None = None,
    first_token_note: str | None = None,
) -> Completion:
    """The SDK's decoded body (a dict, or a string for a non-JSON body) as a ``Completion``,
    with the call's latency, time to first token and attempts (made whole at once: no copy
    per call)."""
    try:
        assert isinstance(data, dict)
        choice = data["choices"][0]
        message = choice.get("message") or {}
    except (AssertionError, KeyError, IndexError, TypeError, AttributeError) as exc:
        snippet = str(data)[:80].replace("\n", " ")
        raise _Malformed(f"not a chat completion ({type(exc).__name__}): {snippet!r}") from None
    usage = data.get("usage") or {}
    refusal = message.get("refusal")
    return Completion(
        text=message.get("content") or "",  # a refusal or an empty reply is still a reply
        model=data.get("model") or model,
        usage=Usage(
            prompt_tokens=_tokens(usage.get("prompt_tokens")),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        ),
        finish_reason=choice.get("finish_reason"),
        latency_s=latency_s,
        first_token_s=first_token_s,
        first_token_note=first_token_note,
        attempts=attempts,
        refusal=str(refusal) if refusal else None,
    )


class OpenAICompatibleClient:
    is_baseline = False
    reads_pixels = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        name: str | None = None,
        params: GenerationParams | None = None,
        concurrency: int = 8,
        rpm: float | None = None,
        timeout_s: float = 120.0,
        max_attempts: int = 5,
        backoff_initial_s: float = 1.0,
        backoff_max_s: float = 30.0,
        structured_mode: StructuredMode = "auto",
        vision: bool = True,
        transport: TransportName = "http",
        proxy: str | None = None,
        stream: StreamSetting = "auto",
    ) -> None:
        self.model = model
        self.name = name or model
        self.params = params or GenerationParams()
        self._identity: tuple[tuple[object, ...], str] | None = None
        self.structured_mode: StructuredMode = structured_mode
        self.vision = vision
        key = api_key or os.environ.get(api_key_env) or "EMPTY"  # local servers accept any key
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url:  # the SDK's default is a public host: never send data there by accident
            raise ValueError(f"model {self.name!r}: no base_url and OPENAI_BASE_URL is not set")
        self.transport: TransportName = transport
        # Retries are ours (the SDK's are off), so they are counted and configurable.
        self._transport = make_transport(transport, base_url, key, timeout_s, proxy=proxy)
        self._semaphore = asyncio.Semaphore(concurrency)
        self._limiter = RateLimiter(rpm)
        self._max_attempts = max_attempts
        self._timeout_s = timeout_s
        self._backoff = (backoff_initial_s, backoff_max_s)
        # ``auto``: the first structured call settles the mode; the others wait for it.
        self._mode: StructuredMode = "json_schema" if structured_mode == "auto" else structured_mode
        self._mode_settled = structured_mode != "auto"
        self._mode_lock = asyncio.Lock()
        self.stream: StreamSetting = stream
        #: Why the streamed tasks go plain (config, or the server refused); None: they stream.
        self.stream_note: str | None = STREAM_OFF_NOTE if stream is False else None
        #: Calls that ended in failure after all attempts, and attempts made in all.
        self.failed_calls = 0
        self.attempts = 0

    @property
    def active_structured_mode(self) -> StructuredMode:
        return self._mode

    def cache_identity(self, request: ChatRequest) -> str:
        """Name, model id, decoding settings and whether images are sent: what changes a reply."""
        state = (self.params, self.name, self.model, self.structured_mode, self.vision)
        memo = self._identity
        if memo is None or any(a is not b for a, b in zip(memo[0], state, strict=True)):
            settings = self.params.model_dump_json()
            sees = "img" if self.vision else "noimg"
            identity = f"{self.name}|{self.model}|{self.structured_mode}|{sees}|{settings}"
            memo = self._identity = (state, identity)  # the same on every call: made once
        return memo[1]

    def _payload(self, request: ChatRequest, mode: StructuredMode) -> dict[str, Any]:
        # Only what the request set explicitly overrides the model's configured settings.
        params = self.params
        if request.params.model_fields_set:
            params = params.model_copy(update=request.params.model_dump(exclude_unset=True))
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(request.messages, vision=self.vision),
        }
        for key in ("temperature", "top_p", "max_tokens", "seed"):
            value = getattr(params, key)
            if value is not None:
                payload[key] = value
        payload.setdefault("max_tokens", default_max_tokens(request.task))
        if params.extra_body:
            payload.update(params.extra_body)
        if request.json_schema is not None:
            fmt = response_format(mode, request.task, request.json_schema)
            if fmt is not None:
                payload["response_format"] = fmt
        return payload

    async def complete(self, request: ChatRequest) -> Completion:
        if request.json_schema is None or self._mode_settled:
            return await self._complete(request, self._mode)
        async with self._mode_lock:
            while not self._mode_settled:
                mode = self._mode
                try:
                    completion = await self._complete(request, mode)
                except LLMError as exc:
                    lower = MODE_ORDER.index(mode) + 1
                    if exc.status not in _FORMAT_REJECTIONS or exc.reason == "context_length":
                        raise  # not about the format: the mode stays open for the next call
                    if lower >= len(MODE_ORDER):
                        # Every mode was rejected: the request itself is at fault, not the mode.
                        self._mode, self._mode_settled = MODE_ORDER[0], True
                        raise
                    self._mode = MODE_ORDER[lower]
                    log.warning(
                        "%s: the server rejected structured mode %s (HTTP %s); trying %s",
                        self.name,
                        mode,
                        exc.status,
                        self._mode,
                    )
                    continue
                self._mode_settled = True
                log.warning("%s: structured output via %s", self.name, mode)
                return completion
        return await self._complete(request, self._mode)

    async def _complete(self, request: ChatRequest, mode: StructuredMode) -> Completion:
        import openai  # here, not at module level: the offline paths never load the SDK

        payload = self._payload(request, mode)
        images = _image_parts(request) if self.vision else ()
        streamed = request.task in STREAMED_TASKS
        initial, maximum = self._backoff
        timeout_s: float | None = None  # the configured bound until a call timed out
        for attempt in range(1, self._max_attempts + 1):
            self.attempts += 1
            try:
                async with self._semaphore:
                    await self._limiter.wait()
                    started = time.perf_counter()
                    first: float | None = None
                    note = self.stream_note if streamed else None
                    try:
                        if streamed and self.stream_note is None:
                            data, first, note, started = await self._stream(
                                payload, images, timeout_s
                            )
                        else:
                            data = await self._transport.post_chat(payload, images, timeout_s)
                    except ValueError as exc:  # a body cut short or not JSON at all
                        raise _Malformed(f"undecodable body: {exc}") from None
                    latency = time.perf_counter() - started
                return parse_completion(
                    data,
                    self.model,
                    latency_s=latency,
                    attempts=attempt,
                    first_token_s=first,
                    first_token_note=note,
                )
            except (openai.OpenAIError, HTTPFailure, _Malformed) as exc:
                reason = "malformed_response" if isinstance(exc, _Malformed) else classify(exc)
                wait = retry_after_s(exc)
                # A timed-out call is re-sent once, with a longer timeout; a second timeout is
                # final (a one-at-a-time server may still be computing the first copies).
                final = (
                    is_permanent(reason)
                    or (reason == "timeout" and timeout_s is not None)
                    or attempt == self._max_attempts
                    or (wait is not None and wait > MAX_RETRY_AFTER_S)
                )
                if final:
                    self.failed_calls += 1
                    raise LLMError(
                        tagged(reason, f"{self.name}: {_describe(exc)}"),
                        reason=reason,
                        permanent=is_permanent(reason),
                        status=getattr(exc, "status_code", None),
                        attempts=attempt,
                    ) from exc
                if reason == "timeout":
                    timeout_s = self._timeout_s * TIMEOUT_RETRY_FACTOR
                    log.warning(
                        "%s: a call timed out after %.0f s; sending it once more with %.0f s",
                        self.name,
                        self._timeout_s,
                        timeout_s,
                    )
                if wait is None:
                    wait = min(maximum, initial * 2 ** (attempt - 1)) + random.uniform(0, initial)
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _stream(
        self, payload: dict[str, Any], images: tuple[ImagePart, ...], timeout_s: float | None
    ) -> tuple[object, float | None, str | None, float]:
        """One streamed exchange: (body, time to first token, note, when the answering request
        went out). Under ``auto`` a server that refuses streams, or answers one with a whole
        body, gets plain requests from then on, and its replies say why (never silently)."""
        import openai

        started = time.perf_counter()
        try:
            result = await self._transport.stream_chat(payload, images, timeout_s)
        except (openai.APIStatusError, HTTPFailure) as exc:
            status = getattr(exc, "status_code", None)
            if self.stream != "auto" or status not in _STREAM_REJECTIONS:
                raise
            if classify(exc) == "context_length":
                raise  # the request's fault, streamed or not
            note = (
                f"not streamed: the server refused a stream request (HTTP {status}); "
                "replies come whole, so no time to first token"
            )
            log.warning("%s: stream request refused: %s", self.name, _describe(exc))
            await self._limiter.wait()
            started = time.perf_counter()
            data = await self._transport.post_chat(payload, images, timeout_s)
            # Settled only once the plain request went through: a request the server rejects
            # either way says nothing about streaming.
            self._stream_off(note)
            return data, None, note, started
        if not result.streamed:
            note = f"not streamed: {result.note}"
            if self.stream == "auto":
                self._stream_off(note)
            return result.data, None, note, started
        return result.data, result.first_token_s, result.note, started

    def _stream_off(self, note: str) -> None:
        if self.stream_note is None:
            self.stream_note = note
            log.warning("%s: %s", self.name, note)

    def forget(self, request: ChatRequest) -> None:
        """Nothing is stored here; the cache wrapper forgets."""

    async def aclose(self) -> None:
        await self._transport.aclose()


def _image_parts(request: ChatRequest) -> tuple[ImagePart, ...]:
    """The parts whose URLs ``to_openai_messages`` put in the payload, as the same objects."""
    return tuple(p for m in request.messages for p in m.content if isinstance(p, ImagePart))


def _describe(exc: BaseException) -> str:
    openai = sys.modules.get("openai")  # none of its errors exist before it is imported
    if (openai is not None and isinstance(exc, openai.APIStatusError)) or (
        isinstance(exc, HTTPFailure) and exc.kind == "status"
    ):
        return f"HTTP {exc.status_code}: {str(exc.message)[:300]}"
    return f"{type(exc).__name__}: {str(exc)[:300]}"
