"""Throughput of corpus screening (parse + Φ_img + Φ_cmpl) on each engine, side by side.

Generates a synthetic corpus (default 100,000 consultations, department-skewed, with a share
of planted drops), then screens the same shard plan with one local process, a local process
pool and Ray Data, checks the three outputs are identical and prints consultations/s.

    PYTHONPATH=src python benchmarks/corpus_engines.py --n 100000 --workers 2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

from medrealmm.corpus import CompletenessConfig, Engine
from medrealmm.corpus.engines import run_screen
from medrealmm.corpus.screen import plan_shards

DEPARTMENTS = [("皮肤科", 40), ("内科", 20), ("儿科", 15), ("妇产科", 8), ("骨科", 6)] + [
    (name, 1) for name in ("肿瘤科", "感染科", "精神心理科", "眼科", "口腔科", "泌尿外科")
]
PATIENT = [
    "医生您好，我这个情况持续一周了。",
    "有点痒，晚上加重。",
    "没有用过药。",
    "好的谢谢医生。",
]
DOCTOR = [
    "您好，请问多久了？",
    "请发一下照片。",
    "考虑湿疹可能，建议外用药膏。",
    "如加重请线下就诊。",
]


def synthetic_case(rng: random.Random, index: int) -> dict[str, object]:
    names, weights = zip(*DEPARTMENTS, strict=True)
    turns = rng.choice([3, 6, 8, 10, 12, 14, 16, 34]) if rng.random() < 0.2 else 12
    events = []
    for t in range(turns):
        patient = t % 2 == 0
        images = []
        if patient and t == 2 and rng.random() > 0.05:
            images = [{"path": f"images/{index}/1.jpg", "origin": "patient", "category": "skin"}]
        events.append(
            {
                "sender": "patient" if patient else "physician",
                "timestamp": f"2025-06-01T09:{t:02d}:00",
                "content": rng.choice(PATIENT if patient else DOCTOR),
                "images": images,
            }
        )
    return {
        "id": f"bench-{index:07d}",
        "department": rng.choices(names, weights)[0],
        "events": events,
    }


def write_corpus(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as handle:
        for index in range(n):
            handle.write(json.dumps(synthetic_case(rng, index), ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    config = CompletenessConfig()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "bench.jsonl"
        write_corpus(corpus, args.n, args.seed)
        shards = plan_shards(corpus)
        runs = [
            ("local, 1 process", Engine.LOCAL, 1),
            (f"local, {args.workers} processes", Engine.LOCAL, args.workers),
            (f"ray data, {args.workers} cpus", Engine.RAY, args.workers),
        ]
        results = []
        startup = 0.0
        for label, engine, workers in runs:
            if engine is Engine.RAY:
                startup = start_ray(workers)
            started = time.perf_counter()
            rows = run_screen(shards, config, engine=engine, workers=workers)
            elapsed = time.perf_counter() - started
            results.append((label, elapsed, rows))
    import ray

    ray.shutdown()
    baseline_rows = results[0][2]
    kept = sum(1 for row in baseline_rows if row["record"])
    print(f"{args.n} consultations in {len(shards)} shards; {kept} pass Φ_img and Φ_cmpl")
    base = results[0][1]
    for label, elapsed, rows in results:
        same = "identical" if rows == baseline_rows else "DIFFERENT"
        speed = args.n / elapsed
        print(f"{label:24s} {elapsed:7.2f} s {speed:9.0f} cons/s  x{base / elapsed:4.2f}  {same}")
    print(f"(ray start-up, not counted above: {startup:.1f} s)")


def start_ray(workers: int) -> float:
    """Start Ray before timing so the comparison is throughput, and report start-up apart."""
    import ray

    started = time.perf_counter()
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    return time.perf_counter() - started


if __name__ == "__main__":
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    main()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
