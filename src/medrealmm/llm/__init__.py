"""One async LLM interface for every agent: OpenAI-compatible servers or the offline baseline."""

from medrealmm.llm.cache import CachedClient, LLMCache, cache_key
from medrealmm.llm.client import LLMClient
from medrealmm.llm.config import ModelSpec, build_client, load_model_specs, resolve_spec
from medrealmm.llm.dialogue import dialogue_messages, dialogue_parts, dialogue_text, send_pixels
from medrealmm.llm.offline import OFFLINE_NAME, OfflineClient, default_rules
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
    "StructuredResult",
    "TextPart",
    "Usage",
    "build_client",
    "cache_key",
    "complete_structured",
    "default_rules",
    "dialogue_messages",
    "dialogue_parts",
    "dialogue_text",
    "extract_json",
    "load_model_specs",
    "render",
    "render_messages",
    "resolve_spec",
    "send_pixels",
]
