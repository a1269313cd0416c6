"""Rubric phase, measured side by side in one run.

1. Generator throughput through the real OpenAI-compatible client against a local fake server
   with fixed latency: concurrency 1 vs 8 over the same instances (fresh stores), and the
   number of calls a rerun makes (goal 0: everything comes from the store's cache).
2. The offline baseline's rubrics over the demo: criteria per case, positives, negatives and
   reference-overlap flags, next to the paper's ranges (3-19, 2-17, 0-7).

Instances come from the MCCP stage of the offline demo (``medrealmm demo``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from medrealmm.llm import ModelSpec, build_client, resolve_spec
from medrealmm.pipeline import run_demo
from medrealmm.rubric import OVERLAP_TAG, RubricSettings, round_history
from medrealmm.rubric.stage import generate_all
from medrealmm.schema import CriterionKind, Instance
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

REPLY = json.dumps(
    {
        "criteria": [
            {"text": "结合图片给出与病情相符的初步判断", "weight": 8},
            {"text": "给出规范的处理建议并说明疗程", "weight": 6},
            {"text": "交代需要线下就医的警示情况", "weight": 4},
            {"text": "编造患者未提供的检查结果", "weight": -8},
        ]
    },
    ensure_ascii=False,
)


def demo_instances(work: Path) -> list[Instance]:
    run_demo(work / "demo")
    with RunStore(work / "demo") as store:
        return list(store.iter(stages.MCCP_INSTANCE, Instance))


def seeded(path: Path, instances: list[Instance]) -> RunStore:
    store = RunStore(path)
    store.put_many(stages.MCCP_INSTANCE, ((i.id, i) for i in instances))
    return store


async def throughput(work: Path, instances: list[Instance], latency: float) -> None:
    settings = RubricSettings(with_images=False)
    with FakeOpenAIServer(lambda body: FakeReply(content=REPLY), latency_s=latency) as server:
        timings = {}
        for concurrency in (1, 8):
            with seeded(work / f"c{concurrency}", instances) as store:
                spec = ModelSpec(name="fake", base_url=server.base_url, concurrency=16)
                client = build_client(spec, cache=store.cache)
                start = time.perf_counter()
                await generate_all(store, client, settings, concurrency=concurrency)
                timings[concurrency] = time.perf_counter() - start
                before = len(server.requests)
                await generate_all(store, client, settings, concurrency=concurrency)
                repeated = len(server.requests) - before
        n = len(instances)
        print(f"generator over {n} instances, fake server latency {latency * 1000:.0f} ms/call")
        for concurrency, seconds in timings.items():
            print(f"  concurrency {concurrency}: {seconds:.2f} s ({n / seconds:.1f} rubrics/s)")
        print(f"  speed-up 8 vs 1: {timings[1] / timings[8]:.1f}x")
        print(f"  calls repeated by a rerun: {repeated}")


async def baseline_stats(work: Path, instances: list[Instance]) -> None:
    with seeded(work / "offline", instances) as store:
        client = build_client(resolve_spec("offline"), cache=store.cache)
        await generate_all(store, client, RubricSettings(with_images=False))
        rubrics = [round_history(store, i.id)[0] for i in instances]
    sizes = [len(r.criteria) for r in rubrics]
    pos = [sum(c.weight > 0 for c in r.criteria) for r in rubrics]
    neg = [sum(c.weight < 0 for c in r.criteria) for r in rubrics]
    llm = [c for r in rubrics for c in r.criteria if c.kind is CriterionKind.LLM]
    flagged = sum(OVERLAP_TAG in c.tags for c in llm)
    print(f"offline baseline rubrics over {len(rubrics)} instances (paper: 3-19, 2-17, 0-7)")
    print(f"  criteria {min(sizes)}-{max(sizes)} (mean {statistics.mean(sizes):.1f})")
    print(f"  positive {min(pos)}-{max(pos)}, negative {min(neg)}-{max(neg)} (incl. length rule)")
    print(f"  flagged as reference wording: {flagged}/{len(llm)} ({flagged / len(llm):.0%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05, help="Fake server s/call.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        instances = demo_instances(work)
        print(f"instances: {len(instances)} from the MCCP stage of the offline demo")
        asyncio.run(throughput(work, instances, args.latency))
        asyncio.run(baseline_stats(work, instances))


if __name__ == "__main__":
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    main()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
