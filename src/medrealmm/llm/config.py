"""Model specs: which backend serves a role, with what settings (YAML or ad hoc)."""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from medrealmm.io.errors import DataError
from medrealmm.io.yamlfile import load_yaml
from medrealmm.llm.cache import CachedClient, LLMCache
from medrealmm.llm.client import LLMClient
from medrealmm.llm.offline import OFFLINE_NAME, OfflineClient
from medrealmm.llm.types import GenerationParams, StreamSetting, StructuredMode, TransportName


class ModelSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    backend: Literal["openai", "offline"] = "openai"
    model: str | None = Field(default=None, description="Model id sent to the server.")
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    params: GenerationParams = Field(default_factory=GenerationParams)
    concurrency: int = Field(default=8, ge=1)
    rpm: float | None = Field(default=None, gt=0)
    timeout_s: float = Field(default=120.0, gt=0)
    max_attempts: int = Field(default=5, ge=1)
    structured_mode: StructuredMode = Field(
        default="auto",
        description="How the schema reaches the server; auto steps down from json_schema "
        "once if the server rejects it, and logs the mode it settled on.",
    )
    vision: bool = Field(default=True, description="False: image parts are never sent.")
    transport: TransportName = Field(
        default="http",
        description="http (bare aiohttp: under half the client CPU per call, for many calls "
        "in flight) or openai-sdk (the official SDK); both pass the same fault tests.",
    )
    stream: StreamSetting = Field(
        default="auto",
        description="Whether the evaluated model's answers stream (time to first token): "
        "auto streams and falls back to whole replies for this endpoint if the server refuses, "
        "noting why; true always streams; false never. Graders and other agents never stream.",
    )
    context_window: int | None = Field(default=None, gt=0, description="Tokens, if known.")
    price_per_mtok_in: float | None = Field(default=None, ge=0, description="Cost per 1M input.")
    price_per_mtok_out: float | None = Field(default=None, ge=0, description="Cost per 1M output.")
    phi: Literal["allowed", "refused"] = Field(
        default="refused",
        description="'allowed' lets stages that see un-masked data call a non-loopback host.",
    )
    proxy: str | None = Field(
        default=None,
        description="Proxy URL for this model's calls, or 'env' for HTTP(S)_PROXY/ALL_PROXY/"
        "NO_PROXY; unset: calls go direct and those variables are ignored.",
    )
    source: str | None = Field(
        default=None,
        description="Where the model is described: the endpoint's documentation or the model "
        "card (a URL), shown in the report's Table 4.",
    )
    checkpoint: str | None = Field(
        default=None,
        description="The checkpoint or snapshot date of the weights behind ``model`` (e.g. "
        "'2025-04-14'), where the id alone does not pin it; Table 4 shows it apart.",
    )


BASE_URL_ENV = "OPENAI_BASE_URL"

OFFLINE_SPEC = ModelSpec(name=OFFLINE_NAME, backend="offline")


def load_model_specs(path: Path | str) -> dict[str, ModelSpec]:
    """Read ``models: [{name: ..., ...}, ...]`` from YAML; errors name the file and entry."""
    path = Path(path)
    data = load_yaml(path) or {}
    specs: dict[str, ModelSpec] = {}
    for index, entry in enumerate(data.get("models", [])):
        try:
            spec = ModelSpec.model_validate(entry)
        except ValidationError as exc:
            raise DataError.from_validation(path, index + 1, exc) from None
        specs[spec.name] = spec
    return specs


def proxy_url(spec: ModelSpec) -> str | None:
    """The proxy this model's calls go through: the one its config names, the environment's
    for its base URL when it says ``proxy: env``, else None (direct). Proxy variables are
    never read otherwise, so a proxy is a host someone configured for this model."""
    if spec.proxy != "env":
        return spec.proxy
    if not spec.base_url or urllib.request.proxy_bypass_environment(
        urlparse(spec.base_url).hostname or ""
    ):
        return None
    found = urllib.request.getproxies_environment()
    scheme = urlparse(spec.base_url).scheme
    return found.get(scheme) or found.get("all") or None


class UnknownModelError(ValueError):
    """A model name with no configured endpoint: never guess one (the SDK's is public)."""


def display_name(name: str) -> str:
    """The name a model is recorded under: ``offline`` is the baseline's alias."""
    return OFFLINE_NAME if name in ("offline", OFFLINE_NAME) else name


def resolve_spec(name: str, config: Path | str | None = None) -> ModelSpec:
    """``offline`` -> the baseline; a name in ``config``; else a model id served at
    ``OPENAI_BASE_URL``. With no base URL from either, the name is an error listing the
    known names: a model is remote only where someone configured where it lives."""
    if name in ("offline", OFFLINE_NAME):
        return OFFLINE_SPEC
    specs = load_model_specs(config) if config is not None else {}
    env_url = os.environ.get(BASE_URL_ENV) or None
    spec = specs.get(name)
    if spec is None and env_url:
        spec = ModelSpec(name=name, model=name)
    if spec is None:
        known = ", ".join(["offline", *sorted(specs)])
        where = f" in {config}" if config is not None else ""
        raise UnknownModelError(
            f"unknown model {name!r}{where}; known: {known} (or set {BASE_URL_ENV} to serve "
            "a model id from your own server)"
        )
    if spec.backend == "openai" and not spec.base_url:
        if not env_url:
            raise UnknownModelError(
                f"model {name!r} has no base_url in {config} and {BASE_URL_ENV} is not set"
            )
        spec = spec.model_copy(update={"base_url": env_url})
    return spec


#: Set by ``medrealmm --max-tokens N --timeout S ...``: they override every model's YAML.
MAX_TOKENS_ENV = "MEDREALMM_MAX_TOKENS"
TIMEOUT_ENV = "MEDREALMM_TIMEOUT_S"


def with_overrides(spec: ModelSpec) -> ModelSpec:
    """The spec with the command line's ``--max-tokens``/``--timeout`` applied, if given."""
    max_tokens, timeout = os.environ.get(MAX_TOKENS_ENV), os.environ.get(TIMEOUT_ENV)
    update: dict[str, object] = {}
    if max_tokens:
        update["params"] = spec.params.model_copy(update={"max_tokens": int(max_tokens)})
    if timeout:
        update["timeout_s"] = float(timeout)
    return spec.model_copy(update=update) if update else spec


def build_client(spec: ModelSpec, cache: LLMCache | None = None) -> LLMClient:
    spec = with_overrides(spec)
    if spec.backend == "offline":
        # Not cached: its rules answer in process faster than a cache lookup, and answer a
        # rerun the same (a changed rule must change the answer, as its cache identity says).
        return OfflineClient(spec.name)
    if not spec.base_url:
        # Never let the SDK pick its default (public) endpoint for patient data.
        raise UnknownModelError(f"model {spec.name!r} has no base_url; resolve_spec sets it")
    # imported here: the SDK is most of a second that readers of a run never need
    from medrealmm.llm.openai_compat import OpenAICompatibleClient

    client = OpenAICompatibleClient(
        spec.model or spec.name,
        name=spec.name,
        base_url=spec.base_url,
        api_key_env=spec.api_key_env,
        params=spec.params,
        concurrency=spec.concurrency,
        rpm=spec.rpm,
        timeout_s=spec.timeout_s,
        max_attempts=spec.max_attempts,
        structured_mode=spec.structured_mode,
        vision=spec.vision,
        transport=spec.transport,
        proxy=proxy_url(spec),
        stream=spec.stream,
    )
    return CachedClient(client, cache) if cache is not None else client
