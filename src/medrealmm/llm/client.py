"""The one interface every agent calls, whatever serves it."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from medrealmm.llm.types import ChatRequest, Completion


@runtime_checkable
class LLMClient(Protocol):
    #: Name shown in reports and used in cache keys (e.g. "offline-baseline", "qwen3-vl-32b").
    name: str
    #: True for the deterministic rule-based backend, so reports can label it a baseline.
    is_baseline: bool

    async def complete(self, request: ChatRequest) -> Completion: ...

    # Optional: ``cache_identity(request) -> str`` names everything besides the request that
    # changes the answer (served model, configured decoding, rule version); the cache keys on it.
