"""CPU-seconds of the offline demo (`medrealmm demo --out DIR`), in all and per stage.

The demo runs in a child process, so its cost is what the operating system charged to it and
to every worker it started (user + system time of reaped children, ``resource.getrusage``),
not this script's. The child times each pipeline stage the same way (its own CPU plus the
workers it reaped during the stage), so the breakdown shows where the seconds go; ``import``
is the interpreter's start and the demo's imports. Prints the machine's load beside the
figures: on a shared machine CPU-seconds drift less than wall time, but not to nothing.

``--detail`` splits de-identification further: each image's CPU by its class (the file name's
kind: lab_report, skin, film ...), and within images the OCR and its parts (the engine's
one-time load, line detection, the direction vote, recognition: the rest of the OCR row is
cropping and turning) and the face cascade, the rest being the text pass and one-time loads.
To charge each image its own seconds (OpenCV's worker threads included) the child masks one
image at a time, which changes the wall time but not the CPU-seconds beyond the run-to-run
noise (a shared machine moves a run by several CPU-seconds either way: repeat it).

``--against OLD/src`` runs the demo with that source tree too, alternately, in fresh folders,
and prints both sides, the ratio of their medians and whether their outputs are identical:
every file of the run folder (masked images, release, report tables) and every row of the run
store, except what records time (the report's latency tables and its page, which prints
them; in the store: times, seconds, latencies, run ids, the run folder and the per-run HMAC
digests).

    PYTHONPATH=src python benchmarks/demo_cpu.py [--out DIR] [--repeat N] [--detail]
        [--against OLD/src]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

# The child: runs the demo with ``run_stage`` wrapped by a timer (and, with --detail, the
# image masker's parts), then prints the timings as one JSON line after a marker.
CHILD = """
import json, resource, sys, time

def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

MARK, DETAIL = sys.argv[2], sys.argv[3] == "1"
from medrealmm.pipeline import demo, runner
spent = [("import", cpu(), 0.0)]
parts = {}
plain = runner.run_stage

def timed(stage, ctx):
    started, wall = cpu(), time.perf_counter()
    try:
        return plain(stage, ctx)
    finally:
        spent.append((stage.name, cpu() - started, time.perf_counter() - wall))

def charge(module, name, label_of):
    fn = getattr(module, name)
    def wrapped(*args):
        started = cpu()
        try:
            return fn(*args)
        finally:
            row = parts.setdefault(label_of(args), [0, 0.0])
            row[0] += 1
            row[1] += cpu() - started
    setattr(module, name, wrapped)

def charge_engine(ocr):
    # The OCR engine is built on the first page: its load, then its line detector, are
    # charged on their own rows (direction and recognition are module functions).
    build = ocr._build_engine
    def built():
        fresh = build.cache_info().currsize == 0
        started = cpu()
        engine = build()
        if fresh:
            parts["  OCR: engine load (once)"] = [1, cpu() - started]
            charge(engine, "text_det", lambda args: "  OCR: line detection")
        return engine
    ocr._build_engine = built

if DETAIL:
    from medrealmm.deid import image, ocr, stage as deid_stage
    from medrealmm.pipeline.steps import deid as deid_step
    plain_deid = deid_step.run_deid_stage
    def one_at_a_time(*args, **kwargs):
        kwargs["concurrency"] = 1
        return plain_deid(*args, **kwargs)
    deid_step.run_deid_stage = one_at_a_time
    def kind(args):
        return "image " + args[0].stem.split("_", 1)[-1]
    charge(deid_stage, "mask_image_file", kind)
    charge(image, "read_page", lambda args: "  OCR (all images)")
    charge(ocr, "_upside_down", lambda args: "  OCR: direction")
    charge(ocr, "recognize", lambda args: "  OCR: recognition")
    charge_engine(ocr)
    charge(image, "face_boxes", lambda args: "  face cascade (all images)")

runner.run_stage = demo.run_stage = timed
demo.run_demo(sys.argv[1])
print(MARK + json.dumps({"stages": spent, "parts": parts}))
"""
MARK = "STAGE-CPU "

# Outputs that record time, left out of the comparison: the report's latency tables and its
# page (which prints them); in the store, these keys of every row.
TIMED_FILES = ("report/index.html", "report/tables/latency.csv", "report/tables/latency.json")
TIMED_KEYS = frozenset(
    {
        "seconds",
        "latency",
        "latency_s",
        "started_at",
        "finished_at",
        "eval_id",
        "digest",
        "location",
    }
)
RUN_ID = re.compile(r"eval-[0-9a-f]{16}")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(out: Path, src: Path, detail: bool) -> tuple[float, float, dict]:
    """CPU-seconds and wall seconds of one demo run (code from ``src``), and its timings."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(src), env.get("PYTHONPATH")) if p)
    cpu_before, started = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(out), MARK, "1" if detail else "0"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu_before
    if done.returncode != 0:
        sys.exit(f"demo failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    timings: dict = {"stages": [], "parts": {}}
    for line in done.stdout.splitlines():
        if line.startswith(MARK):
            timings = json.loads(line[len(MARK) :])
    return cpu, wall, timings


def report(label: str, cpu: float, wall: float, timings: dict, load: tuple[float, float]) -> None:
    print(
        f"{label}: {cpu:.1f} CPU-s (user+sys, all processes), {wall:.1f} s wall, "
        f"load {load[0]:.2f} before / {load[1]:.2f} after"
    )
    totals: dict[str, list[float]] = {}
    for name, stage_cpu, stage_wall in timings["stages"]:
        row = totals.setdefault(name, [0.0, 0.0])
        row[0] += stage_cpu
        row[1] += stage_wall
    for name, (stage_cpu, stage_wall) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
        print(f"  {name:<16}{stage_cpu:>8.1f} CPU-s{stage_wall:>8.1f} s")
    rest = cpu - sum(row[0] for row in totals.values())
    print(f"  {'(other)':<16}{rest:>8.1f} CPU-s")
    for name, (count, part_cpu) in sorted(timings["parts"].items()):
        each = f"  ({part_cpu / count:.2f} each)" if name.startswith("image") else ""
        print(f"    {name:<28}{count:>4} {part_cpu:>7.1f} CPU-s{each}")


def _without_time(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_time(v) for k, v in value.items() if k not in TIMED_KEYS}
    if isinstance(value, list):
        return [_without_time(v) for v in value]
    return value


def fingerprint(run: Path) -> Counter[str]:
    """One entry per output file and per store row, with what records time left out."""
    found: Counter[str] = Counter()
    for path in sorted(run.rglob("*")):
        rel = path.relative_to(run).as_posix()
        if path.is_file() and not path.name.startswith("store.sqlite") and rel not in TIMED_FILES:
            found[f"file {rel} {hashlib.sha256(path.read_bytes()).hexdigest()}"] += 1
    with sqlite3.connect(f"file:{run / 'store.sqlite'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT stage, key, status, payload, error FROM records")
        for stage, key, status, payload, error in rows:
            body = _without_time(json.loads(payload)) if payload else None
            text = json.dumps([status, body, error], sort_keys=True, ensure_ascii=False)
            digest = hashlib.sha256(text.encode()).hexdigest()
            found[f"row {stage} {RUN_ID.sub('eval-*', key)} {digest}"] += 1
    return found


def compare(old: Path, new: Path) -> str:
    a, b = fingerprint(old), fingerprint(new)
    if a == b:
        files = sum(n for k, n in a.items() if k.startswith("file"))
        return f"outputs identical: {files} files, {sum(a.values()) - files} store rows"
    differ = sorted({" ".join(k.split()[:3]) for k in (a - b) + (b - a)})
    return f"outputs DIFFER ({len(differ)}): " + "; ".join(differ[:20])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="demo output folder (default: a temporary one)")
    parser.add_argument("--repeat", type=int, default=1, help="runs, each in a fresh folder")
    parser.add_argument("--detail", action="store_true", help="split deid by image class")
    parser.add_argument("--against", type=Path, help="another source tree (OLD/src) to compare")
    args = parser.parse_args(argv)
    own = Path(__file__).resolve().parents[1] / "src"
    sides = [("new", own)] + ([("old", args.against.resolve())] if args.against else [])
    figures: dict[str, list[float]] = {name: [] for name, _ in sides}
    verdicts: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = args.out or Path(tmp)
        for k in range(args.repeat):
            order = sides if k % 2 == 0 else sides[::-1]  # alternate: drift hits both sides
            made: dict[str, Path] = {}
            for name, src in order:
                out = root / f"{name}{k}"
                load_before = os.getloadavg()[0]
                cpu, wall, timings = run_once(out, src, args.detail)
                load = (load_before, os.getloadavg()[0])
                label = f"demo run {k + 1}" + (f" ({name}, {src})" if args.against else "")
                report(label, cpu, wall, timings, load)
                figures[name].append(cpu)
                made[name] = out
            if args.against:
                verdicts.append(compare(made["old"], made["new"]))
                print(f"  run {k + 1}: {verdicts[-1]}")
    if args.against:
        old, new = statistics.median(figures["old"]), statistics.median(figures["new"])
        print(
            f"median of {args.repeat}: new {new:.1f} CPU-s, old {old:.1f} CPU-s, "
            f"new/old {new / old:.2f}; "
            + (
                "outputs identical in every run"
                if all("identical" in v for v in verdicts)
                else "outputs DIFFER"
            )
        )


if __name__ == "__main__":
    main()
