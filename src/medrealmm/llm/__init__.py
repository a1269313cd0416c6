"""One async LLM interface for every agent: OpenAI-compatible servers or the offline baseline.

``OpenAICompatibleClient`` loads on first use (``__getattr__``): it imports the ``openai`` SDK,
most of a second of start-up that readers of a finished run (the report) never need."""

from typing import TYPE_CHECKING, Any

from medrealmm.llm.cache import CachedClient, LLMCache, cache_key
from medrealmm.llm.client import LLMClient
from medrealmm.llm.config import (
    ModelSpec,
    UnknownModelError,
    build_client,
    display_name,
    load_model_specs,
    resolve_spec,
)
from medrealmm.llm.dialogue import dialogue_messages, dialogue_parts, dialogue_text, send_pixels
from medrealmm.llm.egress import PHIEgressError, guard_unmasked
from medrealmm.llm.offline import OFFLINE_NAME, OfflineClient, default_rules

if TYPE_CHECKING:
    from medrealmm.llm.openai_compat import OpenAICompatibleClient
from medrealmm.llm.prompts import render, render_messages
from medrealmm.llm.structured import StructuredResult, complete_structured, extract_json
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

__all__ = [
    "OFFLINE_NAME",
    "CachedClient",
    "ChatRequest",
    "Completion",
    "GenerationParams",
    "ImagePart",
    "LLMCache",
    "LLMClient",
    "LLMError",
    "Message",
    "ModelSpec",
    "OfflineClient",
    "OpenAICompatibleClient",
    "PHIEgressError",
    "StructuredResult",
    "TextPart",
    "UnknownModelError",
    "Usage",
    "build_client",
    "cache_key",
    "complete_structured",
    "default_rules",
    "dialogue_messages",
    "dialogue_parts",
    "dialogue_text",
    "display_name",
    "extract_json",
    "guard_unmasked",
    "load_model_specs",
    "render",
    "render_messages",
    "resolve_spec",
    "send_pixels",
]


def __getattr__(name: str) -> Any:
    if name != "OpenAICompatibleClient":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from medrealmm.llm.openai_compat import OpenAICompatibleClient

    return OpenAICompatibleClient
