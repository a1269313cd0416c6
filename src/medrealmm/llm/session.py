"""Run one stage's async work against one model: resolve the spec, build the client over the
run store's cache, run the coroutine, close the client. Every stage and CLI goes through here,
so endpoint rules applied in ``resolve_spec``/``build_client`` hold everywhere."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from medrealmm.llm.cache import LLMCache
from medrealmm.llm.client import LLMClient
from medrealmm.llm.config import ModelSpec, build_client, resolve_spec
from medrealmm.llm.dryrun import DryRunClient, collecting
from medrealmm.llm.egress import guard_unmasked
from medrealmm.llm.probe import MetaStore, with_capabilities
from medrealmm.llm.reach import check_endpoint
from medrealmm.runner import run_async

T = TypeVar("T")


def open_client(
    model: str | ModelSpec,
    models_config: Path | str | None,
    cache: LLMCache | None,
    *,
    unmasked: str | None = None,
    meta: MetaStore | None = None,
    probe: bool = True,
) -> LLMClient:
    """``unmasked`` names the step when its calls carry un-masked patient data: then the
    endpoint must be loopback or marked ``phi: allowed`` (see ``medrealmm.llm.egress``).

    The server's capabilities are probed once per endpoint and kept in ``meta`` (the run
    store); ``probe=False`` (a dry run) only applies a result already kept there."""
    spec = model if isinstance(model, ModelSpec) else resolve_spec(model, models_config)
    if unmasked is not None:
        guard_unmasked(spec, unmasked)  # before any connection, even the reachability check
    check_endpoint(spec)
    dry = collecting()
    spec = with_capabilities(spec, meta, ask=probe and dry is None)
    client = build_client(spec, cache=cache)
    if dry is None:
        return client
    counted = DryRunClient(client, spec, cache)  # a whole chain running dry: nothing is sent
    dry.append(counted)
    return counted


def run_with_client(
    client: LLMClient | None, work: Callable[[LLMClient | None], Awaitable[T]]
) -> T:
    """``asyncio.run(work(client))``, closing the client on the same event loop."""

    async def main() -> T:
        try:
            return await work(client)
        finally:
            if client is not None:
                await client.aclose()

    return run_async(main())
