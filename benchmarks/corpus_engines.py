"""Throughput of corpus screening (parse + Φ_img + Φ_cmpl) on each engine, side by side, and
the peak memory of a whole ``corpus build`` as the corpus grows.

1. Generates a synthetic corpus (``--n`` consultations, department-skewed, with a share of
   planted drops; their photos are a pool of real small JPEGs, referenced round-robin, so the
   validator every build runs first finds each one), then screens the same shard plan with
   one local process, a local process pool and Ray Data, checks the three outputs are
   identical and prints consultations/s.
2. For each of ``--sizes``, builds the corpus (every stage: screening, completeness, balance,
   the 4a rule and offline agent, the store and the files) in a fresh process on the local
   engine and on Ray (``--engines``), and prints the build's time, its CPU per consultation
   (user + system, worker processes included) and its peak RSS: the driver's (what holds the
   corpus between stages) and the largest worker process's. ``--against OTHER_SRC`` builds
   the same corpus with another source tree too, side by side, and compares the output files
   and the store's corpus and usage rows byte for byte.

    PYTHONPATH=src python benchmarks/corpus_engines.py --n 100000 --workers 2
    PYTHONPATH=src python benchmarks/corpus_engines.py --n 0 --sizes 100000 1000000
    PYTHONPATH=src python benchmarks/corpus_engines.py --n 0 --sizes 100000 --engines local
    PYTHONPATH=src python benchmarks/corpus_engines.py --n 0 --sizes 20000 --engines local \
        --against ../other-checkout/src
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from medrealmm.corpus import CompletenessConfig, Engine
from medrealmm.corpus.engines import run_screen
from medrealmm.corpus.screen import plan_shards

#: This checkout's source, first on the path of the builds it times.
SRC = Path(__file__).resolve().parent.parent / "src"

#: Photos written once and shared round-robin: a 1M-case corpus must not mean 1M files.
IMAGE_POOL = 500
IMAGE_DIR = "images"
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
            photo = f"{IMAGE_DIR}/{index % IMAGE_POOL}.jpg"
            images = [{"path": photo, "origin": "patient", "category": "skin"}]
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


def write_images(folder: Path) -> None:
    """The photo pool the cases share: IMAGE_POOL small real JPEGs, written once, so the
    validator's image checks (present, decodable) run as on a real export."""
    from PIL import Image

    (folder / IMAGE_DIR).mkdir(parents=True, exist_ok=True)
    for k in range(IMAGE_POOL):
        colour = (k % 256, (k * 7) % 256, (k * 13) % 256)
        Image.new("RGB", (32, 24), colour).save(folder / IMAGE_DIR / f"{k}.jpg", quality=80)


def write_corpus(path: Path, n: int, seed: int) -> None:
    """``n`` synthetic cases at ``path`` and their photo pool beside it."""
    write_images(path.parent)
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as handle:
        for index in range(n):
            handle.write(json.dumps(synthetic_case(rng, index), ensure_ascii=False) + "\n")


#: Run in a fresh interpreter, so ``ru_maxrss`` is this build's peak and nothing earlier's,
#: and its CPU (user + system, its worker processes included) is this build's alone.
BUILD = """
import json, resource, sys, time
from medrealmm.corpus import Engine, build_corpus
started = time.perf_counter()
build_corpus(sys.argv[1], sys.argv[2], engine=Engine(sys.argv[3]), workers=int(sys.argv[4]))
elapsed = time.perf_counter() - started
me = resource.getrusage(resource.RUSAGE_SELF)
children = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime
print(json.dumps({"seconds": elapsed, "cpu_s": cpu, "driver_mb": me.ru_maxrss / 1024,
                  "worker_mb": children.ru_maxrss / 1024}))
"""

#: The files a build writes that must not change with the code that wrote them.
OUTPUT_FILES = ("corpus.sampled.jsonl", "corpus.dropped.jsonl", "manifest.json")


def run_build(corpus: Path, out: Path, engine: Engine, workers: int, src: str) -> dict | None:
    """One build in a fresh process importing ``src``; its figures, or None when it failed."""
    env = {**os.environ, "MEDREALMM_PROGRESS": "0", "PYTHONPATH": src}
    command = [sys.executable, "-c", BUILD, str(corpus), str(out), engine.value, str(workers)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        print(f"  {src}: FAILED: {done.stderr[-400:]}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def store_rows(out: Path) -> tuple[list[tuple], list[tuple]]:
    """The store's corpus rows (stage, key, status, payload, error) and its usage rows."""
    with sqlite3.connect(out / "store.sqlite") as db:
        rows = db.execute(
            "SELECT stage, key, status, payload, error FROM records"
            " WHERE stage LIKE 'corpus.%' ORDER BY stage, key"
        ).fetchall()
        usage = db.execute("SELECT * FROM usage ORDER BY stage, model").fetchall()
    return rows, usage


def differences(ours: Path, theirs: Path) -> list[str]:
    """What differs between two builds' outputs: files byte for byte, the store's rows."""
    changed = [
        name for name in OUTPUT_FILES if (ours / name).read_bytes() != (theirs / name).read_bytes()
    ]
    rows, usage = store_rows(ours)
    other_rows, other_usage = store_rows(theirs)
    if rows != other_rows:
        changed.append("store corpus rows")
    if usage != other_usage:
        # e.g. cached_calls: identical synthetic cases hit a cache that caches the baseline
        changed.append(f"store usage {usage} against {other_usage}")
    return changed


def line(size: int, mb: float, engine: Engine, label: str, figures: dict) -> str:
    return (
        f"{size:>9,} cases ({mb:6.0f} MB) {engine.value:5s} {label:7s} "
        f"{figures['seconds']:7.1f} s  CPU {figures['cpu_s']:7.1f} s "
        f"= {figures['cpu_s'] * 1000 / size:5.3f} ms/cons  driver {figures['driver_mb']:6.0f} MB  "
        f"largest worker {figures['worker_mb']:5.0f} MB  "
        f"({figures['driver_mb'] * 1024 / size:.2f} KB/case)"
    )


def build_memory(
    sizes: list[int], workers: int, seed: int, engines: list[Engine], against: str | None
) -> None:
    print(
        f"corpus build by corpus size ({workers} workers; MB as ru_maxrss reports; CPU is "
        "user + system of the build process and its children)"
    )
    ours = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = Path(tmp) / "bench.jsonl"
            write_corpus(corpus, size, seed)
            mb = corpus.stat().st_size / 1e6
            for engine in engines:
                out = Path(tmp) / f"run-{engine.value}"
                figures = run_build(corpus, out, engine, workers, ours)
                if figures is not None:
                    print(line(size, mb, engine, "this", figures))
                if against is None or figures is None:
                    continue
                other_out = Path(tmp) / f"against-{engine.value}"
                other = run_build(corpus, other_out, engine, workers, against)
                if other is None:
                    continue
                print(line(size, mb, engine, "against", other))
                changed = differences(out, other_out)
                same = "identical" if not changed else "DIFFERENT: " + ", ".join(changed)
                print(
                    f"{'':>9}  CPU this/against x{figures['cpu_s'] / other['cpu_s']:.2f}; "
                    f"outputs and store rows {same}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="screening throughput; 0 skips")
    parser.add_argument(
        "--sizes", type=int, nargs="*", default=[20_000], help="corpus sizes for peak memory"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--against",
        metavar="OTHER_SRC",
        help="a source folder of other code: each build runs with it too, side by side, and "
        "their outputs are compared byte for byte",
    )
    parser.add_argument(
        "--engines",
        nargs="+",
        choices=[e.value for e in Engine],
        default=[e.value for e in Engine],
        help="engines the whole-build memory runs use (the screening comparison runs both)",
    )
    args = parser.parse_args()
    if args.n:
        screening(args)
    if args.sizes:
        engines = [Engine(name) for name in args.engines]
        build_memory(args.sizes, args.workers, args.seed, engines, args.against)


def screening(args: argparse.Namespace) -> None:
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
