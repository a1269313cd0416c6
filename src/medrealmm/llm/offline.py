"""Deterministic rule-based backend: a baseline that lets everything run offline.

Each agent package keeps its rules in ``<package>/baseline.py`` as ``RULES``, a mapping from
task name to a handler that reads ``request.inputs`` and returns the same JSON text a model
would, so the offline path goes through exactly the parsing and validation a real model's
output does. ``RULE_MODULES`` lists those modules explicitly; importing a module registers
nothing. It is named a baseline everywhere and never passed off as a model.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import time
from collections.abc import Callable, Mapping
from functools import cache
from types import MappingProxyType

from medrealmm.llm.types import ChatRequest, Completion, LLMError, Usage

OfflineHandler = Callable[[ChatRequest], str]

OFFLINE_NAME = "offline-baseline"

#: Every module holding offline rules; read by name so the LLM layer imports no agent package.
RULE_MODULES = (
    "medrealmm.corpus.baseline",
    "medrealmm.deid.baseline",
    "medrealmm.mccp.baseline",
    "medrealmm.rubric.baseline",
    "medrealmm.evaluate.baseline",
)


def merge_rules(*tables: Mapping[str, OfflineHandler]) -> dict[str, OfflineHandler]:
    """One table from several; a task claimed twice is a programming error, not an override."""
    merged: dict[str, OfflineHandler] = {}
    for table in tables:
        for task, handler in table.items():
            if task in merged and merged[task] is not handler:
                raise ValueError(f"offline rule for task {task!r} defined twice")
            merged[task] = handler
    return merged


@cache
def default_rules() -> Mapping[str, OfflineHandler]:
    tables = [importlib.import_module(name).RULES for name in RULE_MODULES]
    return MappingProxyType(merge_rules(*tables))


@cache
def _rule_fingerprint(handler: OfflineHandler) -> str:
    """A hash of the handler's module source: a changed rule must not replay old answers."""
    module = inspect.getmodule(handler)
    try:
        source = inspect.getsource(module) if module else inspect.getsource(handler)
    except (OSError, TypeError):
        source = getattr(handler, "__qualname__", repr(handler))
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


class OfflineClient:
    """Rule-based baseline behind the LLMClient interface.

    It accepts image parts (``vision``) so the with/without-image comparison runs offline;
    its rules read ``request.inputs``, never pixels, so its requests carry none
    (``reads_pixels``).
    """

    is_baseline = True
    vision = True
    reads_pixels = False

    def __init__(
        self, name: str = OFFLINE_NAME, rules: Mapping[str, OfflineHandler] | None = None
    ) -> None:
        self.name = name
        self._rules = rules

    @property
    def rules(self) -> Mapping[str, OfflineHandler]:
        return self._rules if self._rules is not None else default_rules()

    def _handler(self, task: str) -> OfflineHandler:
        handler = self.rules.get(task)
        if handler is None:
            known = ", ".join(sorted(self.rules)) or "none"
            raise LLMError(f"the offline baseline has no rule for task {task!r}; known: {known}")
        return handler

    def cache_identity(self, request: ChatRequest) -> str:
        handler = self.rules.get(request.task)
        rules = _rule_fingerprint(handler) if handler is not None else "none"
        return f"{self.name}@rules:{rules}"

    async def complete(self, request: ChatRequest) -> Completion:
        handler = self._handler(request.task)
        started = time.perf_counter()
        text = handler(request)
        chars = sum(len(m.plain_text) for m in request.messages)
        return Completion(
            text=text,
            model=self.name,
            usage=Usage(prompt_tokens=chars, completion_tokens=len(text)),
            latency_s=time.perf_counter() - started,
            first_token_note="not streamed: the offline baseline answers in process",
        )

    def forget(self, request: ChatRequest) -> None:
        """Nothing is stored here; the cache wrapper forgets."""

    async def aclose(self) -> None:
        """No connections to release."""
