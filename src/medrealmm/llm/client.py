"""The one interface every agent calls, whatever serves it.

Every backend and wrapper implements all of it, so callers never probe with ``getattr``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from medrealmm.llm.types import ChatRequest, Completion


@runtime_checkable
class LLMClient(Protocol):
    #: Name shown in reports and used in cache keys (e.g. "offline-baseline", "qwen3-vl-32b").
    name: str
    #: True for the deterministic rule-based backend, so reports can label it a baseline.
    is_baseline: bool
    #: True when the model reads image parts; ``send_pixels`` is the one rule that consults it.
    vision: bool
    #: False when the backend answers from ``request.inputs`` and never looks at image bytes
    #: (the offline baseline): its image parts then name the file instead of inlining pixels.
    reads_pixels: bool

    async def complete(self, request: ChatRequest) -> Completion: ...

    def cache_identity(self, request: ChatRequest) -> str:
        """Everything besides the request that changes the answer (served model, configured
        decoding, rule version): the response cache keys on it."""
        ...

    def forget(self, request: ChatRequest) -> None:
        """Drop a stored answer that turned out unusable so a rerun asks again (no-op uncached)."""
        ...

    async def aclose(self) -> None:
        """Release connections; the client is not used afterwards."""
        ...
