"""Grading throughput against an OpenAI-compatible server in another process, side by side.

A loopback server (its own process, so its CPU is not counted as ours) answers every call
after a fixed latency L and admits N at once, so the ideal rate is N / L calls per second.
In one run, for each N, the same C grader calls are made by:

- the harness: ``run_eval`` grading C criteria (store, cache, structured output, scoring),
  once on each transport (``openai-sdk`` and the lean ``http``);
- the bare async SDK: ``AsyncOpenAI.chat.completions.create`` with N in flight;
- a simple-evals-style thread pool: the sync SDK in a ``ThreadPoolExecutor`` of N threads;
- raw aiohttp: one session, N in flight, the same JSON body posted and the reply parsed, the
  transport's own cost, so the table shows how far the harness is from it.

It prints achieved / ideal and the client process's CPU per call for each, the median of three
rounds with the sides interleaved (each round printed), each harness side's throughput and
CPU per call as a multiple of raw aiohttp's in the same round, with the machine load
(``os.getloadavg``) before and after, then kills a run half way, reruns it and prints
how many finished calls the rerun asked again (goal 0).

    python benchmarks/eval_throughput.py --criteria 2000 --latency 0.1 --concurrency 16 64
    python benchmarks/eval_throughput.py --criteria 4000 --concurrency 64 256 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
import openai
import yaml

from medrealmm.evaluate import (
    GRADER_TASK,
    ONLINE,
    EvalSettings,
    GraderOutput,
    run_eval,
    run_evaluation,
)
from medrealmm.llm import ChatRequest, render_messages
from medrealmm.llm.openai_compat import OpenAICompatibleClient
from medrealmm.llm.transport import TRANSPORTS
from medrealmm.schema import Criterion, Event, Instance, Rubric, Sender
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

CRITERIA_PER_CASE = 10
RAW = "raw aiohttp (transport control)"
BARE_PROMPT = {
    "department": "皮肤科",
    "dialogue": "[1] 患者：医生您好，第1例",
    "response": "您好，考虑湿疹，建议外用药膏并保持皮肤清洁。",
    "criterion": "准则1",
    "weight": 1,
}


def grader_reply(body: dict[str, Any]) -> FakeReply:
    return FakeReply(content=json.dumps({"rationale": "符合准则", "met": True}))


def _serve(latency: float, concurrency: int, queue: Any) -> None:
    """An asyncio server: on two shared cores a thread per connection (the test suite's
    ``FakeOpenAIServer``) takes CPU the client under test needs, and measures the server."""
    from aiohttp import web

    reply = FakeOpenAIServer.completion_body({"model": "bench-judge"}, grader_reply({}).content)
    body = json.dumps(reply, ensure_ascii=False).encode()
    active = 0

    async def completions(request: web.Request) -> web.Response:
        nonlocal active
        try:
            await request.read()
        except ConnectionResetError:  # the client was cancelled (the kill below): no reply
            return web.Response(status=499)
        if active >= concurrency:  # as a server with N slots answers the N+1st
            return web.json_response({"error": {"message": "busy"}}, status=429)
        active += 1
        try:
            await asyncio.sleep(latency)
        finally:
            active -= 1
        return web.Response(body=body, content_type="application/json")

    async def main() -> None:
        app = web.Application(client_max_size=1 << 26)  # image bodies run to megabytes
        app.router.add_post("/v1/chat/completions", completions)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        queue.put(f"http://127.0.0.1:{port}/v1")
        await asyncio.Event().wait()

    asyncio.run(main())


@contextlib.contextmanager
def server_process(latency: float, concurrency: int) -> Iterator[str]:
    """The fake server in its own process: the client's CPU is then all that we measure."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_serve, args=(latency, concurrency, queue), daemon=True)
    process.start()
    try:
        yield queue.get(timeout=60)
    finally:
        process.terminate()
        process.join()


def fill(store: RunStore, criteria: int) -> None:
    cases = -(-criteria // CRITERIA_PER_CASE)
    left = criteria
    for i in range(cases):
        instance = Instance(
            id=f"bench-{i:05d}",
            consultation_id=f"c{i}",
            department="皮肤科",
            t_star=0,
            context=[
                Event(
                    sender=Sender.PATIENT,
                    timestamp=datetime(2025, 1, 1),
                    content=f"医生您好，第{i}例",
                )
            ],
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


def write_config(
    folder: Path, base_url: str, concurrency: int, transport: str = "openai-sdk"
) -> Path:
    spec = {
        "transport": transport,
        "name": "bench-judge",
        "model": "bench-judge",
        "base_url": base_url,
        "concurrency": concurrency,
        "structured_mode": "json_schema",
    }
    path = folder / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [spec]}), encoding="utf-8")
    return path


def settings(config: Path) -> EvalSettings:
    return EvalSettings(model=ONLINE, grader="bench-judge", models_config=config)


def _wire_request() -> dict[str, Any]:
    """The grader call as the bare clients send it: same messages, same json_schema."""
    # Only builds the payload; no call is made, so any loopback URL will do.
    client = OpenAICompatibleClient(
        "bench-judge", base_url="http://127.0.0.1:9/v1", structured_mode="json_schema"
    )
    request = ChatRequest(
        task=GRADER_TASK,
        messages=render_messages("medrealmm.evaluate", "grader", **BARE_PROMPT),
        json_schema=GraderOutput.model_json_schema(),
    )
    return client._payload(request, "json_schema")


def measure(run: Callable[[], int]) -> tuple[int, float, float]:
    """(calls, wall seconds, client CPU seconds) of one side."""
    wall, cpu = time.perf_counter(), time.process_time()
    calls = run()
    return calls, time.perf_counter() - wall, time.process_time() - cpu


def harness(
    folder: Path, base_url: str, n: int, criteria: int, transport: str
) -> Callable[[], int]:
    """The harness's side: the store already holds the instances and rubrics (earlier stages'
    output, which the bare clients do not write either); opening it, grading and scoring are
    timed."""
    path = folder / f"harness-{n}-{transport}"  # a fresh store: nothing answered from cache
    with RunStore(path) as store:
        fill(store, criteria)

    def run() -> int:
        config = write_config(folder, base_url, n, transport)  # one file for every side
        with RunStore(path) as store:
            return run_evaluation(store, settings(config)).verdicts.done

    return run


def bare_sdk(base_url: str, n: int, criteria: int) -> int:
    payload = _wire_request()

    async def main() -> int:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=2)
        gate = asyncio.Semaphore(n)

        async def one() -> None:
            async with gate:
                reply = await client.chat.completions.create(**payload)
                GraderOutput.model_validate_json(reply.choices[0].message.content or "")

        await asyncio.gather(*(one() for _ in range(criteria)))
        await client.close()
        return criteria

    return asyncio.run(main())


def raw_aiohttp(base_url: str, n: int, criteria: int) -> int:
    """The control: bare transport cost (no SDK, store, cache or retries)."""
    payload = _wire_request()
    url = base_url.rstrip("/") + "/chat/completions"

    async def main() -> int:
        gate = asyncio.Semaphore(n)
        connector = aiohttp.TCPConnector(limit=n)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def one() -> None:
                async with gate, session.post(url, json=payload) as response:
                    response.raise_for_status()
                    body = await response.json()
                GraderOutput.model_validate_json(body["choices"][0]["message"]["content"])

            await asyncio.gather(*(one() for _ in range(criteria)))
        return criteria

    return asyncio.run(main())


def thread_pool(base_url: str, n: int, criteria: int) -> int:
    payload = _wire_request()
    client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=2)

    def one(_: int) -> None:
        reply = client.chat.completions.create(**payload)
        GraderOutput.model_validate_json(reply.choices[0].message.content or "")

    with ThreadPoolExecutor(max_workers=n) as pool:
        list(pool.map(one, range(criteria)))
    client.close()
    return criteria


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def side_by_side(folder: Path, args: argparse.Namespace) -> None:
    """Each side runs ``--rounds`` times, the sides interleaved round by round, so a burst of
    other work on the shared cores falls on every side alike; each side's median is printed
    with every round's figure."""
    print(
        f"{args.criteria} grader calls per side, L = {1000 * args.latency:.0f} ms, "
        f"median of {args.rounds} interleaved rounds; {load()}"
    )
    print(f"{'N':>4} {'client':<32} {'of ideal':>9} {'CPU ms/call':>12}  rounds (of ideal)")
    for n in args.concurrency:
        ideal = n / args.latency
        with server_process(args.latency, n) as base_url:
            results: dict[str, list[tuple[float, float]]] = {}
            for round_ in range(args.rounds):
                sides = {
                    **{
                        f"harness ({transport} transport)": harness(
                            folder / f"round-{round_}", base_url, n, args.criteria, transport
                        )
                        for transport in TRANSPORTS
                    },
                    "bare async SDK": partial(bare_sdk, base_url, n, args.criteria),
                    "thread pool (simple-evals)": partial(thread_pool, base_url, n, args.criteria),
                    RAW: partial(raw_aiohttp, base_url, n, args.criteria),
                }
                for name, side in sides.items():
                    calls, wall, cpu = measure(side)
                    results.setdefault(name, []).append(
                        (calls / wall / ideal, 1000 * cpu / max(calls, 1))
                    )
            for name, runs in results.items():
                ratios = [ratio for ratio, _ in runs]
                each = ", ".join(f"{ratio:.3f}" for ratio in ratios)
                print(
                    f"{n:>4} {name:<32} {statistics.median(ratios):>9.3f} "
                    f"{statistics.median(cpu for _, cpu in runs):>12.2f}  {each}"
                )
            print_against_raw(n, results)
    print(
        "goal: harness >= 0.95 of raw aiohttp's throughput at N=64 and N=256, "
        "<= 2x its CPU per call"
    )
    print(f"after: {load()}")


def print_against_raw(n: int, results: dict[str, list[tuple[float, float]]]) -> None:
    """Each harness side beside the raw aiohttp control, round by round (the sides of one
    round ran back to back), then the medians of those per-round ratios."""
    raw = results[RAW]
    for name, runs in results.items():
        if not name.startswith("harness"):
            continue
        speed = [ours / theirs for (ours, _), (theirs, _) in zip(runs, raw, strict=True)]
        cpu = [ours / theirs for (_, ours), (_, theirs) in zip(runs, raw, strict=True)]
        print(
            f"{n:>4} {name:<32} vs raw aiohttp: throughput x{statistics.median(speed):.3f}, "
            f"CPU per call x{statistics.median(cpu):.2f}  (rounds "
            + ", ".join(f"x{a:.3f}/x{b:.2f}" for a, b in zip(speed, cpu, strict=True))
            + ")"
        )


async def repeats_after_kill(folder: Path, args: argparse.Namespace) -> None:
    n = args.concurrency[0]
    with RunStore(folder / "killed") as store:
        fill(store, args.criteria)
        with server_process(args.latency, n) as base_url:
            config = write_config(folder, base_url, n)
            task = asyncio.create_task(run_eval(store, settings(config)))
            while store.count(stages.EVAL_VERDICT) < args.criteria // 2:
                await asyncio.sleep(0.01)
            task.cancel()  # every call in flight is cut off, as by a kill
            with contextlib.suppress(asyncio.CancelledError):
                await task
        done_at_kill = store.count(stages.EVAL_VERDICT)
        finished_calls = len(store.cache)
        with FakeOpenAIServer(grader_reply) as fresh:
            config = write_config(folder, fresh.base_url, n)
            outcome = await run_eval(store, settings(config))
            sent = len(fresh.requests)
        needed = len(store.cache) - finished_calls
    print(
        f"killed at {done_at_kill}/{args.criteria} verdicts; rerun graded "
        f"{outcome.verdicts.done}, skipped {outcome.verdicts.skipped}"
    )
    print(f"repeated calls after the kill = {sent - needed}  (goal 0)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--criteria", type=int, default=2000, help="grader calls per side")
    parser.add_argument("--latency", type=float, default=0.1, help="server latency L (s)")
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=[16, 64], help="N, server and client"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="runs of each side; the median is printed"
    )
    args = parser.parse_args()
    os.environ.setdefault("MEDREALMM_PROGRESS", "0")
    # The loopback server's capabilities are known: its probe requests are not grader calls,
    # and would be counted as calls the rerun repeated.
    os.environ["MEDREALMM_PROBE"] = "off"
    with tempfile.TemporaryDirectory() as tmp:
        side_by_side(Path(tmp), args)
        asyncio.run(repeats_after_kill(Path(tmp), args))


if __name__ == "__main__":
    main()
