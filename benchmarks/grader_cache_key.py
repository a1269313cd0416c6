"""Cost of the LLM-cache key for grader calls that carry a case's images.

Every criterion of a case is one grader call with the same inline images. The cache key used
to hash the whole request, megabytes of base64 included, on every call; it now hashes each
image's data URL once (``ImagePart.digest``, kept on the part) and the other calls of the case,
which share the part, reuse it. This prints the time per call of both keys, measured side by
side in one run, their ratio, and the machine's load while it ran.

    python benchmarks/grader_cache_key.py --cases 20 --criteria 10 --images 4 --mb 1
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import random
import time

from medrealmm.evaluate import grader_request
from medrealmm.llm import ChatRequest, ImagePart, TextPart, cache_key
from medrealmm.schema import Criterion


def whole_request_key(client_name: str, request: ChatRequest) -> str:
    """The previous key: the full request, images and all, hashed on every call."""
    body = {
        "client": client_name,
        "messages": [m.model_dump(mode="json") for m in request.messages],
        "params": request.params.model_dump(mode="json"),
        "schema": request.json_schema,
    }
    blob = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def case_requests(case: int, args: argparse.Namespace, rng: random.Random) -> list[ChatRequest]:
    """One case: its images encoded once, then one grader request per criterion."""
    parts: list[TextPart | ImagePart] = [TextPart(text=f"[1] 患者：第{case}例，请看图片")]
    for _ in range(args.images):
        raw = rng.randbytes(int(args.mb * 1_000_000))
        parts.append(ImagePart(url="data:image/jpeg;base64," + base64.b64encode(raw).decode()))
    return [
        grader_request(
            department="皮肤科",
            context=[],
            parts=parts,
            criterion=Criterion(id=f"c{j}", text=f"准则{j}：询问病史", weight=j + 1),
            reply="您好，考虑湿疹，建议外用药膏。",
        )
        for j in range(args.criteria)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--criteria", type=int, default=10, help="grader calls per case")
    parser.add_argument("--images", type=int, default=4, help="images per case")
    parser.add_argument("--mb", type=float, default=1.0, help="raw megabytes per image")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    load_before = os.getloadavg()
    old_s = new_s = 0.0
    calls = 0
    for case in range(args.cases):
        requests = case_requests(case, args, rng)
        # alternate which key goes first, so neither always meets a warm CPU cache
        order = (whole_request_key, cache_key) if case % 2 else (cache_key, whole_request_key)
        for key in order:
            started = time.perf_counter()
            for request in requests:
                key("judge", request)
            elapsed = time.perf_counter() - started
            if key is cache_key:
                new_s += elapsed
            else:
                old_s += elapsed
        calls += len(requests)
    load_after = os.getloadavg()
    print(
        f"{args.cases} cases x {args.criteria} grader calls, {args.images} images of "
        f"{args.mb:g} MB each"
    )
    print(f"whole-request key : {1000 * old_s / calls:8.3f} ms per call")
    print(f"per-image digest  : {1000 * new_s / calls:8.3f} ms per call")
    print(f"ratio (whole / per-image): {old_s / new_s:.1f}x")
    print(
        f"machine: {os.cpu_count()} CPUs, load average {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after"
    )


if __name__ == "__main__":
    main()
