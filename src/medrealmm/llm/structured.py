"""Structured output: parse, validate, repair-and-retry, and record failure instead of crashing."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from medrealmm.llm.client import LLMClient
from medrealmm.llm.failures import tagged
from medrealmm.llm.types import ChatRequest, Completion, LLMError, Message

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)

REPAIR_MESSAGE = (
    "你上一次的输出无法通过校验：{error}\n请只输出一个符合要求的 JSON 对象，不要输出任何其他文字。"
)


def extract_json(text: str) -> object:
    """Take the JSON object out of a reply that may wrap it in prose or a code fence."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        candidate = candidate.strip()
        start, end = candidate.find("{"), candidate.rfind("}")
        if start == -1 or end <= start:
            continue
        try:
            return json.loads(candidate[start : end + 1])
        except json.JSONDecodeError:
            continue
    raise ValueError("no JSON object found in the reply")


@dataclass
class StructuredResult(Generic[T]):
    value: T | None
    error: str | None = None
    attempts: int = 0
    completions: list[Completion] = field(default_factory=list)
    #: True when asking again cannot help (a 4xx, an unsupported feature, context length):
    #: a plain rerun leaves it recorded; ``--retry-failed`` asks anyway.
    permanent: bool = False
    #: Requests the call that failed for good took (0: no call failed); usage counts them.
    failed_attempts: int = 0

    @property
    def ok(self) -> bool:
        return self.value is not None


@cache
def schema_for(model: type[BaseModel]) -> dict[str, object]:
    """JSON schema of an output model; cached, since pydantic rebuilds it on every call."""
    return model.model_json_schema()


async def complete_structured(
    client: LLMClient,
    request: ChatRequest,
    schema: type[T],
    *,
    attempts: int = 3,
) -> StructuredResult[T]:
    """Ask until the reply validates against ``schema``, at most ``attempts`` times.

    Each retry shows the model its own bad output and the validation error. Transport
    failures (after the client's own retries) end the loop as a recorded failure.
    """
    if request.json_schema is None:
        request = request.model_copy(update={"json_schema": schema_for(schema)})
    result: StructuredResult[T] = StructuredResult(value=None)
    current = request
    for attempt in range(1, attempts + 1):
        result.attempts = attempt
        try:
            completion = await client.complete(current)
        except LLMError as exc:
            result.error = f"call failed: {exc}"
            result.permanent = exc.permanent
            result.failed_attempts = exc.attempts
            return result
        result.completions.append(completion)
        try:
            result.value = schema.model_validate(extract_json(completion.text))
            result.error = None
            return result
        except (ValueError, ValidationError) as exc:
            cut = " (reply cut at max_tokens)" if completion.truncated else ""
            detail = _short_error(exc) + cut
            result.error = tagged("malformed_output", detail)
            # An answer that failed validation must not be replayed from the cache by a rerun.
            client.forget(current)
        repair = [
            Message.text("assistant", completion.text),
            Message.text("user", REPAIR_MESSAGE.format(error=detail)),
        ]
        current = current.model_copy(update={"messages": [*request.messages, *repair]})
    return result


def _short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors()[:3]:
            loc = ".".join(str(p) for p in err["loc"]) or "<root>"
            parts.append(f"{loc}: {err['msg']}")
        return "; ".join(parts)
    return str(exc)
