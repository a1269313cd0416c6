"""Deterministic rule-based backend: a baseline that lets everything run offline.

Each agent registers one small handler for its task name (``register_offline``); the handler
reads ``request.inputs`` and returns the same JSON text a model would, so the offline path
goes through exactly the parsing and validation a real model's output does. It is named a
baseline everywhere and never passed off as a model.
"""

from __future__ import annotations

import hashlib
import inspect
import time
from collections.abc import Callable
from functools import cache

from medrealmm.llm.types import ChatRequest, Completion, LLMError, Usage

OfflineHandler = Callable[[ChatRequest], str]

_HANDLERS: dict[str, OfflineHandler] = {}

OFFLINE_NAME = "offline-baseline"


def register_offline(task: str) -> Callable[[OfflineHandler], OfflineHandler]:
    def decorate(handler: OfflineHandler) -> OfflineHandler:
        if task in _HANDLERS and _HANDLERS[task] is not handler:
            raise ValueError(f"offline handler for task {task!r} registered twice")
        _HANDLERS[task] = handler
        return handler

    return decorate


def offline_tasks() -> list[str]:
    return sorted(_HANDLERS)


@cache
def _rule_fingerprint(task: str) -> str:
    """A hash of the handler's module source: a changed rule must not replay old answers."""
    handler = _HANDLERS.get(task)
    if handler is None:
        return "none"
    module = inspect.getmodule(handler)
    try:
        source = inspect.getsource(module) if module else inspect.getsource(handler)
    except (OSError, TypeError):
        source = getattr(handler, "__qualname__", repr(handler))
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


class OfflineClient:
    """Rule-based baseline behind the LLMClient interface."""

    is_baseline = True

    def __init__(self, name: str = OFFLINE_NAME) -> None:
        self.name = name

    def cache_identity(self, request: ChatRequest) -> str:
        return f"{self.name}@rules:{_rule_fingerprint(request.task)}"

    async def complete(self, request: ChatRequest) -> Completion:
        handler = _HANDLERS.get(request.task)
        if handler is None:
            raise LLMError(
                f"the offline baseline has no rule for task {request.task!r}; "
                f"known tasks: {', '.join(offline_tasks()) or 'none'}"
            )
        started = time.perf_counter()
        text = handler(request)
        chars = sum(len(m.plain_text) for m in request.messages)
        return Completion(
            text=text,
            model=self.name,
            usage=Usage(prompt_tokens=chars, completion_tokens=len(text)),
            latency_s=time.perf_counter() - started,
        )
