"""Client CPU per grader call with images: the whole body encoded per call (old) against the
images' pre-encoded bytes spliced in (``medrealmm.llm.wire``, new), side by side in one run.

One case with ``--images`` patient images of ``--image-mb`` MB each; its grader requests (one
per criterion, as ``CaseRequests`` builds them) are

1. encoded: the payload built and turned into body bytes, ``--calls`` times a side, the sides
   interleaved over ``--rounds`` rounds; it checks both give the same bytes;
2. sent: ``OpenAICompatibleClient.complete`` over the ``http`` transport to a loopback server
   in its own process (its CPU not counted), the old side with the plain encoding patched in,
   beside the floor: the same bodies built beforehand and posted by a bare aiohttp session.

It prints the median per-call CPU of each side (each round's figure too) and the machine load.

    PYTHONPATH=src python benchmarks/image_calls.py --images 4 --image-mb 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import aiohttp
from eval_throughput import server_process  # the loopback server in its own process

from medrealmm.evaluate.requests import CaseRequests
from medrealmm.llm import ChatRequest, transport
from medrealmm.llm.openai_compat import OpenAICompatibleClient, _image_parts
from medrealmm.llm.wire import encode_body, plain_body
from medrealmm.schema import Criterion, Event, ImageRef, Instance, Sender

REPLY = "您好，考虑湿疹，建议外用药膏并保持皮肤清洁。"


def case_requests(folder: Path, images: int, size: int, criteria: int) -> list[ChatRequest]:
    refs = []
    for i in range(images):
        (folder / f"{i}.jpg").write_bytes(os.urandom(size))
        refs.append(ImageRef(path=f"{i}.jpg", origin="patient", category="skin"))
    instance = Instance(
        id="bench-0",
        consultation_id="c0",
        department="皮肤科",
        t_star=0,
        context=[
            Event(
                sender=Sender.PATIENT,
                timestamp=datetime(2025, 1, 1),
                content="医生您好，手上起了红疹，很痒，照片如下。",
                images=refs,
            )
        ],
        target_reply=REPLY,
    )
    requests = CaseRequests(instance, folder)
    return [
        requests.grader(
            Criterion(id=f"c{j}", text=f"准则{j}：指出需要线下就诊", weight=1),
            REPLY,
            with_images=True,
        )
        for j in range(criteria)
    ]


def client(base_url: str = "http://127.0.0.1:9/v1") -> OpenAICompatibleClient:
    return OpenAICompatibleClient(
        "bench-judge", base_url=base_url, structured_mode="json_schema", transport="http"
    )


def old_body(c: OpenAICompatibleClient, request: ChatRequest) -> bytes:
    return plain_body(c._payload(request, "json_schema"))


def new_body(c: OpenAICompatibleClient, request: ChatRequest) -> bytes:
    return encode_body(c._payload(request, "json_schema"), _image_parts(request))


def cpu_per_call(run: Callable[[], None], calls: int) -> float:
    started = time.process_time()
    run()
    return (time.process_time() - started) / calls


def encoding(requests: list[ChatRequest], calls: int) -> dict[str, Callable[[], None]]:
    c = client()

    def side(body: Callable[[OpenAICompatibleClient, ChatRequest], bytes]) -> Callable[[], None]:
        def run() -> None:
            for i in range(calls):  # each body dropped at once, as after its post
                body(c, requests[i % len(requests)])

        return run

    return {"old: whole body encoded": side(old_body), "new: images spliced": side(new_body)}


def sending(
    requests: list[ChatRequest], calls: int, base_url: str
) -> dict[str, Callable[[], None]]:
    async def send(in_flight: int) -> None:
        c = client(base_url)
        gate = asyncio.Semaphore(in_flight)

        async def one(i: int) -> None:
            async with gate:
                await c.complete(requests[i % len(requests)])

        await asyncio.gather(*(one(i) for i in range(calls)))
        await c.aclose()

    def old() -> None:
        spliced = transport.encode_body
        transport.encode_body = lambda payload, images=(): plain_body(payload)  # type: ignore[assignment]
        try:
            asyncio.run(send(4))
        finally:
            transport.encode_body = spliced  # type: ignore[assignment]

    async def floor(in_flight: int) -> None:
        """Bodies built beforehand, posted by a bare aiohttp session: the wire's own cost."""
        gate = asyncio.Semaphore(in_flight)
        headers = {"Content-Type": "application/json"}
        async with aiohttp.ClientSession(headers=headers) as session:

            async def one(i: int) -> None:
                async with gate, session.post(url, data=bodies[i % len(bodies)]) as response:
                    json.loads(await response.read())

            await asyncio.gather(*(one(i) for i in range(calls)))

    url = base_url + "/chat/completions"
    bodies = [old_body(client(), r) for r in requests]  # outside the timed side
    return {
        "old: whole body encoded": old,
        "new: images spliced": lambda: asyncio.run(send(4)),
        "floor: prebuilt bytes": lambda: asyncio.run(floor(4)),
    }


def side_by_side(title: str, sides: dict[str, Callable[[], None]], calls: int, rounds: int) -> None:
    figures: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, run in sides.items():
            figures[name].append(cpu_per_call(run, calls) * 1e3)
    print(title)
    medians = {name: statistics.median(values) for name, values in figures.items()}
    for name, values in figures.items():
        rounds_shown = " ".join(f"{v:.2f}" for v in values)
        print(f"  {name:26s} {medians[name]:7.2f} ms CPU/call  (rounds: {rounds_shown})")
    old, new = list(medians.values())[:2]
    print(f"  old / new {old / new:.1f}x")


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=4)
    parser.add_argument("--image-mb", type=float, default=1.0)
    parser.add_argument("--criteria", type=int, default=10, help="grader requests of the case")
    parser.add_argument("--calls", type=int, default=100, help="calls per side per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(load())
    with tempfile.TemporaryDirectory() as tmp:
        size = int(args.image_mb * 1_000_000)
        requests = case_requests(Path(tmp), args.images, size, args.criteria)
        c = client()
        same = all(old_body(c, r) == new_body(c, r) for r in requests)
        body_mb = len(old_body(c, requests[0])) / 1e6
        print(
            f"{args.images} images x {args.image_mb:g} MB, body {body_mb:.1f} MB a call; "
            f"old and new bodies {'identical' if same else 'DIFFERENT'}"
        )
        side_by_side(
            "1. payload built and encoded (client CPU per call)",
            encoding(requests, args.calls),
            args.calls,
            args.rounds,
        )
        with server_process(0.0, 64) as base_url:
            side_by_side(
                "2. sent over the http transport to a loopback server (client CPU per call)",
                sending(requests, args.calls, base_url),
                args.calls,
                args.rounds,
            )
    print(load())


if __name__ == "__main__":
    main()
