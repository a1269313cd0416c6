"""MCCP extraction throughput: one call at a time vs concurrent, and a rerun from the cache.

Runs the real OpenAI-compatible client against the loopback fake server, which answers every
agent after a fixed latency (a stand-in for a model server), over the bundled demo corpus.
Prints wall time, calls per second and the ratios measured side by side in this one run.

    python benchmarks/mccp_extract.py [--latency 0.02] [--limit 20] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.io import iter_jsonl
from medrealmm.llm import CachedClient, OpenAICompatibleClient
from medrealmm.mccp import builtin_taxonomy, run_mccp
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

INTENT = builtin_taxonomy("intent").ids[0]
STAGE = builtin_taxonomy("stage").ids[0]


def respond(body: dict[str, Any]) -> FakeReply:
    system = body["messages"][0]["content"]
    if "患者意图" in system:
        payload: dict[str, Any] = {"label": INTENT}
    elif "问诊阶段" in system:
        payload = {"label": STAGE}
    else:
        payload = {"label": True, "score": 0.5, "reason": "基准测试"}
    return FakeReply(content=json.dumps(payload, ensure_ascii=False))


def fresh_store(root: Path, name: str, limit: int) -> RunStore:
    corpus = bundled_corpus_dir()
    cases = list(iter_jsonl(corpus / CORPUS_FILE, Consultation))[:limit]
    store = RunStore(root / name)
    store.put_many(stages.RAW, ((c.id, c) for c in cases))
    store.set_meta(stages.image_root_key(stages.RAW), str(corpus))
    return store


async def timed(store: RunStore, client: Any, concurrency: int) -> tuple[float, int]:
    started = time.perf_counter()
    summary = await run_mccp(
        store, client, source_stage=stages.RAW, verifier_images=False, concurrency=concurrency
    )
    assert summary.failed == 0, summary.errors
    return time.perf_counter() - started, summary.instances


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.02, help="fake model latency (s)")
    parser.add_argument("--limit", type=int, default=20, help="consultations to extract")
    parser.add_argument("--concurrency", type=int, default=16, help="calls in flight at once")
    args = parser.parse_args()
    os.environ.setdefault("MEDREALMM_PROGRESS", "0")

    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeOpenAIServer(respond, latency_s=args.latency) as server,
    ):
        root = Path(tmp)

        def client(concurrency: int) -> OpenAICompatibleClient:
            return OpenAICompatibleClient(
                "bench", base_url=server.base_url, api_key="k", concurrency=concurrency
            )

        store = fresh_store(root, "sequential", args.limit)
        sequential, n = asyncio.run(timed(store, client(1), 1))
        calls = server.completed_calls

        store = fresh_store(root, "concurrent", args.limit)
        cached = CachedClient(client(args.concurrency), store.cache)
        concurrent, _ = asyncio.run(timed(store, cached, args.concurrency))

        for key in store.keys(stages.MCCP_INSTANCE):  # as if lost: redo them from the cache
            store.delete(stages.MCCP_INSTANCE, key)
        store.delete(stages.MCCP_DISCARDED)
        before = server.completed_calls
        rerun, _ = asyncio.run(timed(store, CachedClient(client(1), store.cache), 1))
        assert server.completed_calls == before, "the rerun reached the server"

    print(f"{args.limit} consultations -> {n} instances, {calls} calls, latency {args.latency}s")
    rows = [
        ("sequential (1 call at a time)", sequential, f"{calls / sequential:.1f} calls/s"),
        (
            f"concurrent ({args.concurrency} in flight)",
            concurrent,
            f"{calls / concurrent:.1f} calls/s",
        ),
        ("rerun from the cache", rerun, "0 calls reached the server"),
    ]
    for label, seconds, note in rows:
        print(f"{label:<32} {seconds:7.2f}s  {note}")
    print(f"speedup concurrent / sequential: {sequential / concurrent:.1f}x")
    print(f"speedup cached rerun / sequential: {sequential / rerun:.1f}x")


if __name__ == "__main__":
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    main()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
