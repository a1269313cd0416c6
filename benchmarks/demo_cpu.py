"""CPU-seconds of the offline demo (`medrealmm demo --out DIR`), in all and per stage.

The demo runs in a child process, so its cost is what the operating system charged to it and
to every worker it started (user + system time of reaped children, ``resource.getrusage``),
not this script's. The child times each pipeline stage the same way (its own CPU plus the
workers it reaped during the stage), so the breakdown shows where the seconds go. Prints the
machine's load beside the figures: on a shared machine CPU-seconds drift less than wall time,
but not to nothing.

    PYTHONPATH=src python benchmarks/demo_cpu.py [--out DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The child: runs the demo with ``run_stage`` wrapped by a timer, then prints the timings as
# one JSON line after a marker.
CHILD = """
import json, resource, sys, time
from medrealmm.pipeline import demo, runner

MARK = sys.argv[2]
spent = []
plain = runner.run_stage

def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

def timed(stage, ctx):
    started, wall = cpu(), time.perf_counter()
    try:
        return plain(stage, ctx)
    finally:
        spent.append((stage.name, cpu() - started, time.perf_counter() - wall))

runner.run_stage = demo.run_stage = timed
demo.run_demo(sys.argv[1])
print(MARK + json.dumps(spent))
"""
MARK = "STAGE-CPU "


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(out: Path) -> tuple[float, float, list[tuple[str, float, float]]]:
    """CPU-seconds and wall seconds of one demo run, and the child's per-stage timings."""
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    cpu_before, started = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(out), MARK],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu_before
    if done.returncode != 0:
        sys.exit(f"demo failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    stages: list[tuple[str, float, float]] = []
    for line in done.stdout.splitlines():
        if line.startswith(MARK):
            stages = [tuple(row) for row in json.loads(line[len(MARK) :])]  # type: ignore[misc]
    return cpu, wall, stages


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="demo output folder (default: a temporary one)")
    parser.add_argument("--repeat", type=int, default=1, help="runs, each in a fresh folder")
    args = parser.parse_args(argv)
    for k in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            out = args.out / f"run{k}" if args.out else Path(tmp) / "demo"
            load_before = os.getloadavg()[0]
            cpu, wall, stages = run_once(out)
            load_after = os.getloadavg()[0]
        print(
            f"demo run {k + 1}: {cpu:.1f} CPU-s (user+sys, all processes), {wall:.1f} s wall, "
            f"load {load_before:.2f} before / {load_after:.2f} after"
        )
        totals: dict[str, list[float]] = {}
        for name, stage_cpu, stage_wall in stages:
            row = totals.setdefault(name, [0.0, 0.0])
            row[0] += stage_cpu
            row[1] += stage_wall
        for name, (stage_cpu, stage_wall) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
            print(f"  {name:<16}{stage_cpu:>8.1f} CPU-s{stage_wall:>8.1f} s")
        rest = cpu - sum(row[0] for row in totals.values())
        print(f"  {'(start, other)':<16}{rest:>8.1f} CPU-s")


if __name__ == "__main__":
    main()
