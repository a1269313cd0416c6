"""What a server can do, asked with three cheap requests instead of guessed from its name.

Structured mode reuses the client's own step-down (``auto``); vision sends one 8x8 PNG (any
error means no vision); the context window comes from ``/models`` metadata where the server
gives it (llama.cpp ``meta.n_ctx_train``, vLLM ``max_model_len``). Results are kept per
(base_url, model) in the run store. Values a model's YAML declares always win over a probe.

Every stage gets its client through ``with_capabilities`` (``llm.session.open_client`` and the
evaluation plan), so a run probes each endpoint once, before its first real call, and a
text-only model never gets image parts. ``MEDREALMM_PROBE=off`` turns the automatic probe off.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import logging
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from medrealmm.llm.config import ModelSpec, proxy_url, with_overrides
from medrealmm.llm.types import (
    ChatRequest,
    GenerationParams,
    ImagePart,
    LLMError,
    Message,
    StructuredMode,
    TextPart,
)

log = logging.getLogger("medrealmm.probe")
#: ``off`` (or 0/no/false) turns the automatic probe before a run off.
PROBE_ENV = "MEDREALMM_PROBE"
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


async def probe(spec: ModelSpec, timeout_s: float | None = None) -> Capabilities:
    """Ask the spec's server; the YAML is not consulted here (see ``apply``). Each request
    waits as long as a run's calls would (``timeout_s`` in the YAML, ``--timeout``): a
    one-at-a-time CPU server may take longer than any fixed limit for its first reply."""
    spec = with_overrides(spec)
    timeout_s = spec.timeout_s if timeout_s is None else timeout_s
    if spec.backend == "offline" or not spec.base_url:
        raise ValueError(f"model {spec.name!r} has no endpoint to probe (offline baseline)")
    model = spec.model or spec.name
    caps = Capabilities(base_url=spec.base_url, model=model)
    from medrealmm.llm.openai_compat import OpenAICompatibleClient  # the SDK: on use only

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
        transport=spec.transport,
        proxy=proxy_url(spec),
    )
    try:
        with _quiet_client_log():
            ask = Message.text("user", '只回答 JSON：{"ok": true}')
            try:
                await client.complete(
                    ChatRequest(task="probe.structured", messages=[ask], json_schema=_SCHEMA)
                )
                caps.structured_mode = client.active_structured_mode
            except LLMError as exc:
                caps.notes.append(f"structured: {exc.reason}")
            look = Message(
                role="user", content=[ImagePart(url=tiny_png()), TextPart(text="颜色？")]
            )
            try:
                await client.complete(ChatRequest(task="probe.vision", messages=[look]))
                caps.vision = True
            except LLMError as exc:
                # Only a server that answered the text request can be said to refuse images;
                # otherwise the failure says nothing about vision (a busy or broken server).
                caps.vision = False if caps.structured_mode is not None else None
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
    import httpx  # here: only a probe of a server needs it, not the offline path

    try:
        reply = httpx.get(
            f"{spec.base_url.rstrip('/')}/models",
            headers=headers,
            timeout=5.0,
            trust_env=False,
            proxy=proxy_url(spec),
        )
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
    fixed = declared(spec)
    update: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    for name in PROBED:
        value = getattr(caps, name)
        if name in fixed:
            sources[name] = "declared"
        elif value is not None:
            update[name], sources[name] = value, "probed"
        else:
            sources[name] = "default"
    return spec.model_copy(update=update), sources


class MetaStore(Protocol):
    """Where probe results are kept between runs: the run store's meta table."""

    def get_meta(self, key: str, default: Any = None) -> Any: ...

    def set_meta(self, key: str, value: Any) -> None: ...


#: Endpoints this process has probed or announced, so a chain of stages says it once.
_announced: set[str] = set()


def probe_enabled() -> bool:
    return os.environ.get(PROBE_ENV, "on").strip().lower() not in ("off", "0", "no", "false")


def declared(spec: ModelSpec) -> set[str]:
    """Probed fields the model's YAML sets (``structured_mode: auto`` counts as unset)."""
    unset = {"structured_mode"} if spec.structured_mode == "auto" else set()
    return (spec.model_fields_set - unset) & set(PROBED)


def with_capabilities(spec: ModelSpec, meta: MetaStore | None, *, ask: bool = True) -> ModelSpec:
    """``spec`` with what its server can do, probed once per (endpoint, model) and run store.

    No probe for the offline baseline, when the YAML declares every probed field, when the
    store already holds a result, or with ``ask=False`` (a dry run: kept results only). One
    line on stderr says what was found and used; a failed probe keeps the spec as it is.
    """
    if spec.backend == "offline" or not spec.base_url or not probe_enabled():
        return spec
    if declared(spec) == set(PROBED):
        return spec
    key = store_key(spec)
    kept = meta.get_meta(key) if meta is not None else None
    if kept is not None:
        caps, origin = Capabilities.model_validate(kept), "kept from an earlier probe"
    elif not ask:
        return spec
    else:
        try:
            caps = _probe_now(spec)
        except Exception as exc:
            log.warning(
                "model %s: capability probe of %s failed (%s); using the YAML's values",
                spec.name,
                spec.base_url,
                exc,
            )
            return spec
        origin = "probed"
        if meta is not None:
            meta.set_meta(key, caps.model_dump(mode="json"))
    used, sources = apply(spec, caps)
    if key not in _announced:
        _announced.add(key)
        summary = describe(used, sources)
        log.warning("model %s: %s %s: %s", spec.name, origin, spec.base_url, summary)
    return used


def describe(spec: ModelSpec, sources: dict[str, Source]) -> str:
    """``structured json_object (probed), vision no (declared), context 8192 (probed)``."""
    vision = "yes" if spec.vision else "no (no image parts are sent)"
    context = spec.context_window or "unknown"
    return (
        f"structured {spec.structured_mode} ({sources['structured_mode']}), "
        f"vision {vision} ({sources['vision']}), context {context} ({sources['context_window']})"
    )


def _probe_now(spec: ModelSpec) -> Capabilities:
    """Run ``probe`` on its own event loop in a worker thread: callers may be inside a loop."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, probe(spec)).result()


@contextlib.contextmanager
def _quiet_client_log() -> Iterator[None]:
    """The probe's own structured-mode step-down is not news: the one summary line is."""
    client_log = logging.getLogger("medrealmm.llm.openai_compat")
    level = client_log.level
    client_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        client_log.setLevel(level)
