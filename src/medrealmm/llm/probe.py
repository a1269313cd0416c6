"""What a server can do, asked with three cheap requests instead of guessed from its name.

Structured mode reuses the client's own step-down (``auto``); vision sends one 8x8 PNG (any
error means no vision); the context window comes from ``/models`` metadata where the server
gives it (llama.cpp ``meta.n_ctx_train``, vLLM ``max_model_len``). Results are kept per
(base_url, model) in the run store. Values a model's YAML declares always win over a probe.
"""

from __future__ import annotations

import base64
import io
import os
from typing import Any, Literal

import httpx
from pydantic import BaseModel

from medrealmm.llm.config import ModelSpec, with_overrides
from medrealmm.llm.openai_compat import OpenAICompatibleClient, StructuredMode
from medrealmm.llm.types import (
    ChatRequest,
    GenerationParams,
    ImagePart,
    LLMError,
    Message,
    TextPart,
)

#: Probed fields, each also a ModelSpec field a YAML may declare.
PROBED = ("structured_mode", "vision", "context_window")
_CONTEXT_KEYS = ("max_model_len", "context_length", "context_window", "n_ctx", "n_ctx_train")
_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


class Capabilities(BaseModel):
    """What one (base_url, model) answered; ``None`` where the probe could not tell."""

    base_url: str
    model: str
    structured_mode: StructuredMode | None = None
    vision: bool | None = None
    context_window: int | None = None
    notes: list[str] = []


def store_key(spec: ModelSpec) -> str:
    """The run-store meta key a probe of ``spec``'s endpoint and model id is kept under."""
    return f"llm.capabilities:{spec.base_url}|{spec.model or spec.name}"


def tiny_png() -> str:
    """An 8x8 grey PNG as a data URL: the cheapest image a vision model must accept."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (128, 128, 128)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


async def probe(spec: ModelSpec, timeout_s: float = 30.0) -> Capabilities:
    """Ask the spec's server; the YAML is not consulted here (see ``apply``)."""
    spec = with_overrides(spec)
    if spec.backend == "offline" or not spec.base_url:
        raise ValueError(f"model {spec.name!r} has no endpoint to probe (offline baseline)")
    model = spec.model or spec.name
    caps = Capabilities(base_url=spec.base_url, model=model)
    client = OpenAICompatibleClient(
        model,
        name=spec.name,
        base_url=spec.base_url,
        api_key_env=spec.api_key_env,
        params=GenerationParams(max_tokens=16, temperature=0.0),
        concurrency=1,
        timeout_s=timeout_s,
        max_attempts=1,
        structured_mode="auto",
        vision=True,
    )
    try:
        ask = Message.text("user", '只回答 JSON：{"ok": true}')
        try:
            await client.complete(
                ChatRequest(task="probe.structured", messages=[ask], json_schema=_SCHEMA)
            )
            caps.structured_mode = client.active_structured_mode
        except LLMError as exc:
            caps.notes.append(f"structured: {exc.reason}")
        look = Message(role="user", content=[ImagePart(url=tiny_png()), TextPart(text="颜色？")])
        try:
            await client.complete(ChatRequest(task="probe.vision", messages=[look]))
            caps.vision = True
        except LLMError as exc:
            caps.vision = False
            caps.notes.append(f"vision: {exc.reason}")
    finally:
        await client.aclose()
    caps.context_window = context_window(_listing(spec, model))
    return caps


def context_window(entry: dict[str, Any] | None) -> int | None:
    """The context length a ``/models`` entry states, at the top level or under ``meta``."""
    if not entry:
        return None
    for holder in (entry, entry.get("meta") or {}):
        for key in _CONTEXT_KEYS:
            value = holder.get(key) if isinstance(holder, dict) else None
            if isinstance(value, int) and value > 0:
                return value
    return None


def _listing(spec: ModelSpec, model: str) -> dict[str, Any] | None:
    key = os.environ.get(spec.api_key_env)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        reply = httpx.get(f"{spec.base_url.rstrip('/')}/models", headers=headers, timeout=5.0)
        entries = reply.json().get("data", []) if reply.status_code == 200 else []
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    match = [e for e in entries if e.get("id") == model]
    return (match or (entries if len(entries) == 1 else [None]))[0]


Source = Literal["declared", "probed", "default"]


def apply(spec: ModelSpec, caps: Capabilities) -> tuple[ModelSpec, dict[str, Source]]:
    """``spec`` with probed values where its YAML left the field unset (``structured_mode``
    left at ``auto`` counts as unset), and where each value came from."""
    declared = spec.model_fields_set - (
        {"structured_mode"} if spec.structured_mode == "auto" else set()
    )
    update: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    for name in PROBED:
        value = getattr(caps, name)
        if name in declared:
            sources[name] = "declared"
        elif value is not None:
            update[name], sources[name] = value, "probed"
        else:
            sources[name] = "default"
    return spec.model_copy(update=update), sources
