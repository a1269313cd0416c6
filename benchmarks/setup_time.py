"""How long the README's two set-up commands take on this machine: the install in a fresh
virtual environment, then the offline demo.

Runs exactly what the README shows, in a temporary folder: ``python -m venv``, then
``pip install -e "ROOT[EXTRAS]"`` (default ``dev``, the README's install line), then
``medrealmm demo --out DIR`` with that environment's own command. Prints each step's wall time,
the CPU-seconds the operating system charged to it and its children, and the load average
before and after: on a shared machine wall time moves with the load, CPU-seconds much less.
Downloads come from whatever index pip is set up to use, and pip's own wheel cache is used as
it would be by a user (say so beside a figure: a first install on a new machine compiles or
downloads more).

    python benchmarks/setup_time.py [--extras dev] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU-seconds (user + system of the reaped children) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extras", default="dev", help="the extras of the install line")
    parser.add_argument("--keep", default="", help="build the venv and demo here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.keep or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        venv = folder / "venv"
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["HOME"] = str(folder / "home")  # the demo's acceptances and caches stay in here
        target = f"{ROOT}[{args.extras}]" if args.extras else str(ROOT)
        steps = [
            ("venv", [sys.executable, "-m", "venv", str(venv)]),
            ("install", [str(venv / "bin" / "pip"), "install", "-q", "-e", target]),
            ("demo", [str(venv / "bin" / "medrealmm"), "demo", "--out", str(folder / "demo")]),
        ]
        print(f"python {sys.version.split()[0]} on {os.cpu_count()} CPUs; extras: {args.extras}")
        for name, command in steps:
            load = os.getloadavg()[0]
            wall, cpu = timed(command, env)
            print(
                f"{name:8s} {wall:7.1f} s wall  {cpu:7.1f} CPU-s  "
                f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after"
            )


if __name__ == "__main__":
    main()
