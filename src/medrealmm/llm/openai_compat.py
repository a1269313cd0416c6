"""OpenAI-compatible backend (official SDK, async): vLLM, SGLang, llama.cpp, Ollama, hosted APIs."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Literal

import openai
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from medrealmm.llm.types import (
    ChatRequest,
    Completion,
    GenerationParams,
    ImagePart,
    LLMError,
    Message,
    TextPart,
    Usage,
)

StructuredMode = Literal["json_schema", "json_object", "none"]


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError | openai.RateLimitError):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Text-only messages go as plain strings: some local servers reject content arrays."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if all(isinstance(part, TextPart) for part in message.content):
            wire.append({"role": message.role, "content": message.plain_text})
            continue
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, ImagePart):
                parts.append({"type": "image_url", "image_url": {"url": part.url}})
            else:
                parts.append({"type": "text", "text": part.text})
        wire.append({"role": message.role, "content": parts})
    return wire


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


class OpenAICompatibleClient:
    is_baseline = False

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
        structured_mode: StructuredMode = "json_schema",
        vision: bool = True,
    ) -> None:
        self.model = model
        self.vision = vision
        self.name = name or model
        self.params = params or GenerationParams()
        self.structured_mode = structured_mode
        key = api_key or os.environ.get(api_key_env) or "EMPTY"  # local servers accept any key
        self._client = openai.AsyncOpenAI(
            base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
            api_key=key,
            timeout=timeout_s,
            max_retries=0,  # retries are ours, so they are counted and configurable
        )
        self._semaphore = asyncio.Semaphore(concurrency)
        self._limiter = RateLimiter(rpm)
        self._max_attempts = max_attempts
        self._backoff = (backoff_initial_s, backoff_max_s)

    def cache_identity(self, request: ChatRequest) -> str:
        """Name, served model id and configured decoding: what changes the answer."""
        settings = self.params.model_dump_json()
        return f"{self.name}|{self.model}|{self.structured_mode}|{settings}"

    def _payload(self, request: ChatRequest) -> dict[str, Any]:
        # Only what the request set explicitly overrides the model's configured settings.
        params = self.params.model_copy(update=request.params.model_dump(exclude_unset=True))
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(request.messages),
        }
        for key in ("temperature", "top_p", "max_tokens", "seed"):
            value = getattr(params, key)
            if value is not None:
                payload[key] = value
        if params.extra_body:
            payload["extra_body"] = params.extra_body
        if request.json_schema is not None and self.structured_mode == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.task.replace(".", "_")[:64],
                    "schema": request.json_schema,
                },
            }
        elif request.json_schema is not None and self.structured_mode == "json_object":
            payload["response_format"] = {"type": "json_object"}
        return payload

    async def complete(self, request: ChatRequest) -> Completion:
        payload = self._payload(request)
        initial, maximum = self._backoff
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(_retryable),
                stop=stop_after_attempt(self._max_attempts),
                wait=wait_exponential_jitter(multiplier=initial, max=maximum, jitter=initial),
                reraise=True,
            ):
                with attempt:
                    async with self._semaphore:
                        await self._limiter.wait()
                        started = time.perf_counter()
                        response = await self._client.chat.completions.create(**payload)
                        latency = time.perf_counter() - started
        except openai.OpenAIError as exc:
            raise LLMError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        if not response.choices:
            raise LLMError(f"{self.name}: response had no choices")
        text = response.choices[0].message.content or ""
        usage = response.usage
        return Completion(
            text=text,
            model=response.model or self.model,
            usage=Usage(
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
            ),
            latency_s=latency,
        )

    def forget(self, request: ChatRequest) -> None:
        """Nothing is stored here; the cache wrapper forgets."""

    async def aclose(self) -> None:
        await self._client.close()
