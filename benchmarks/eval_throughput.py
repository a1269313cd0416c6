"""Grading throughput against a local OpenAI-compatible server, and repeats after a kill.

A loopback server answers every grader call after a fixed latency L and admits at most N
concurrent requests; the grader runs with concurrency N, so the ideal throughput is N / L
calls per second. The script grades C criteria (the online reply of synthetic instances, so
every call is a grader call) and prints achieved / ideal, and beside it the same number of
calls made by the bare client (no store, no grading): their ratio is the evaluation's own
overhead, whatever the machine's load. It then repeats the run in a fresh store,
stops it half way (cancelling every call in flight, as a kill does), reruns it and prints how
many finished calls the rerun asked again (goal 0).

    python benchmarks/eval_throughput.py --criteria 2000 --latency 0.1 --concurrency 16
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from medrealmm.evaluate import GRADER_TASK, ONLINE, EvalSettings, GraderOutput, run_eval
from medrealmm.llm import ChatRequest, OpenAICompatibleClient, render_messages
from medrealmm.schema import Criterion, Event, Instance, Rubric, Sender
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

CRITERIA_PER_CASE = 10
BARE_PROMPT = {
    "department": "皮肤科",
    "dialogue": "[1] 患者：医生您好，第1例",
    "response": "您好，考虑湿疹，建议外用药膏并保持皮肤清洁。",
    "criterion": "准则1",
    "weight": 1,
}


def grader_reply(body: dict[str, Any]) -> FakeReply:
    return FakeReply(content=json.dumps({"rationale": "符合准则", "met": True}))


def serve(args: argparse.Namespace) -> FakeOpenAIServer:
    return FakeOpenAIServer(grader_reply, latency_s=args.latency, max_concurrency=args.concurrency)


def fill(store: RunStore, criteria: int) -> None:
    cases = -(-criteria // CRITERIA_PER_CASE)
    left = criteria
    for i in range(cases):
        stamp = datetime(2025, 1, 1)
        instance = Instance(
            id=f"bench-{i:05d}",
            consultation_id=f"c{i}",
            department="皮肤科",
            t_star=0,
            context=[Event(sender=Sender.PATIENT, timestamp=stamp, content=f"医生您好，第{i}例")],
            target_reply="您好，考虑湿疹，建议外用药膏并保持皮肤清洁。",
        )
        n = min(CRITERIA_PER_CASE, left)
        left -= n
        rubric = Rubric(
            instance_id=instance.id,
            criteria=[Criterion(id=f"c{j}", text=f"准则{j}", weight=j + 1) for j in range(n)],
        )
        store.put(stages.MCCP_INSTANCE, instance.id, instance)
        store.put(stages.RUBRIC_ROUND, f"{instance.id}#00", rubric)


def write_config(folder: Path, server: FakeOpenAIServer, concurrency: int) -> Path:
    spec = {
        "name": "bench-judge",
        "model": "bench-judge",
        "base_url": server.base_url,
        "concurrency": concurrency,
    }
    path = folder / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [spec]}), encoding="utf-8")
    return path


def settings(config: Path) -> EvalSettings:
    return EvalSettings(model=ONLINE, grader="bench-judge", models_config=config)


async def bare_client(server: FakeOpenAIServer, args: argparse.Namespace) -> float:
    """Calls/s of the OpenAI-compatible client alone: same calls, no store, no grading."""
    client = OpenAICompatibleClient(
        "bench-judge", base_url=server.base_url, concurrency=args.concurrency
    )
    schema = GraderOutput.model_json_schema()
    gate = asyncio.Semaphore(args.concurrency)
    prompt = render_messages("medrealmm.evaluate", "grader", **BARE_PROMPT)

    async def one(i: int) -> None:
        request = ChatRequest(task=GRADER_TASK, messages=prompt, json_schema=schema)
        async with gate:
            await client.complete(request)

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(args.criteria)))
    wall = time.perf_counter() - started
    await client.aclose()
    return args.criteria / wall


async def throughput(folder: Path, server: FakeOpenAIServer, args: argparse.Namespace) -> None:
    config = write_config(folder, server, args.concurrency)
    before = await bare_client(server, args)  # bare runs on both sides: load drifts
    with RunStore(folder / "throughput") as store:
        fill(store, args.criteria)
        started, cpu_started = time.perf_counter(), time.process_time()
        outcome = await run_eval(store, settings(config))
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
    achieved = outcome.verdicts.done / wall
    ideal = args.concurrency / args.latency
    done = outcome.verdicts.done
    print(f"graded {done} criteria in {wall:.2f}s ({outcome.incomplete} incomplete)")
    print(f"achieved {achieved:.1f} calls/s, ideal N/L = {ideal:.1f} calls/s")
    print(f"throughput ratio achieved/ideal = {achieved / ideal:.3f}  (goal >= 0.9)")
    per_call_ms = 1000 * cpu / max(done, 1)
    print(
        f"CPU per graded criterion (client and in-process server) = {per_call_ms:.1f} ms, "
        f"so one free core caps throughput at {1000 / per_call_ms:.0f} calls/s"
    )
    after = await bare_client(server, args)
    bare = (before + after) / 2
    print(f"bare client, same calls without store or grading: {before:.1f} / {after:.1f} calls/s")
    print(f"evaluation / bare client (mean) = {achieved / bare:.3f}  (the evaluation's overhead)")
    rejected = server.status_log.count(429)
    print(f"server: peak concurrency {server.peak_concurrency}, 429 rejections {rejected}")


async def repeats_after_kill(
    folder: Path, server: FakeOpenAIServer, args: argparse.Namespace
) -> None:
    config = write_config(folder, server, args.concurrency)
    with RunStore(folder / "killed") as store:
        fill(store, args.criteria)
        task = asyncio.create_task(run_eval(store, settings(config)))
        while store.count(stages.EVAL_VERDICT) < args.criteria // 2:
            await asyncio.sleep(0.01)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        done_at_kill = store.count(stages.EVAL_VERDICT)
        finished_calls = len(store.cache)
        # The rerun talks to a fresh server, so calls cut off by the kill are not counted.
        with serve(args) as fresh:
            outcome = await run_eval(store, settings(write_config(folder, fresh, args.concurrency)))
            sent = len(fresh.requests)
        needed = len(store.cache) - finished_calls
    print(
        f"killed at {done_at_kill}/{args.criteria} verdicts; rerun graded "
        f"{outcome.verdicts.done}, skipped {outcome.verdicts.skipped}"
    )
    print(f"repeated calls after the kill = {sent - needed}  (goal 0)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--criteria", type=int, default=2000, help="criteria to grade")
    parser.add_argument("--latency", type=float, default=0.1, help="server latency L (s)")
    parser.add_argument("--concurrency", type=int, default=16, help="N, server and client")
    args = parser.parse_args()
    os.environ.setdefault("MEDREALMM_PROGRESS", "0")
    with tempfile.TemporaryDirectory() as tmp, serve(args) as server:
        asyncio.run(throughput(Path(tmp), server, args))
        asyncio.run(repeats_after_kill(Path(tmp), server, args))


if __name__ == "__main__":
    main()
