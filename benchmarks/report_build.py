"""Side-by-side timings for the statistics behind the report.

1. Vectorised bootstrap (one numpy draw of all resamples) against the same percentile bootstrap
   written as a Python loop, on identical data, seed and resample count.
2. Building every table and figure of the report from a synthetic run store of N cases, for
   each N of ``--cases``, in a fresh process (so its peak RSS is the report's own); with
   ``--against SRC`` the same report is built by another source tree (e.g. an older checkout's
   ``src``) in the same run, side by side, and the two reports' tables are compared. This
   tree's report is built twice: "cold" with an empty font cache (the page's font subset is
   cut), "warm" with the subset the first one kept.

Run: PYTHONPATH=src python benchmarks/report_build.py [--cases 200 16000] [--resamples 2000]
     [--against OLD/src]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from medrealmm.stats import bootstrap_mean_ci
from medrealmm.testing.synthetic_store import build_synthetic_store


def loop_bootstrap(values: list[float], resamples: int, seed: int) -> tuple[float, float]:
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    return means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]


def timed(call: object, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, nargs="+", default=[200])
    parser.add_argument("--bootstrap-cases", type=int, default=200)
    parser.add_argument("--against", default="", help="another source tree to time alongside")
    parser.add_argument("--stores", default="", help="keep (and reuse) the synthetic stores here")
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()

    rng = random.Random(1)
    values = [rng.random() for _ in range(args.bootstrap_cases)]
    fast = timed(lambda: bootstrap_mean_ci(values, resamples=args.resamples, seed=0))
    slow = timed(lambda: loop_bootstrap(values, args.resamples, 0), repeat=1)
    interval = bootstrap_mean_ci(values, resamples=args.resamples, seed=0)
    low, high = loop_bootstrap(values, args.resamples, 0)
    print(f"bootstrap of {args.bootstrap_cases} cases x {args.resamples} resamples")
    print(f"  numpy    {fast * 1e3:8.1f} ms  CI [{interval.low:.4f}, {interval.high:.4f}]")
    print(f"  loop     {slow * 1e3:8.1f} ms  CI [{low:.4f}, {high:.4f}]")
    print(f"  speed-up {slow / fast:8.1f}x")

    for cases in args.cases:
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            path = Path(args.stores or folder) / f"run-{cases}"
            if not (path / "store.sqlite").is_file():  # a kept one is reused as it is
                build_synthetic_store(path, cases=cases)
            built = time.perf_counter() - start
            print(f"report of {cases} cases (synthetic store ready in {built:.1f} s):")
            # the page's font subset is kept on disk between reports: "cold" starts from an
            # empty folder and cuts it, "warm" is the next report, which reads it back
            trees = [("cold", ""), ("warm", "")]
            trees += [("against", args.against)] if args.against else []
            tables = {}
            fonts = Path(folder) / "font-cache"
            for label, source in trees:
                out = Path(folder) / f"report-{len(tables)}"
                figures = report_in_fresh_process(path, out, args.resamples, source, fonts)
                tables[label] = sorted((out / "tables").glob("*.json"))
                print(
                    f"  {label:10s} {figures['seconds']:6.2f} s ({figures['cpu_s']:6.2f} CPU-s)  "
                    f"peak RSS "
                    f"{figures['peak_mb']:5.0f} MB  ({figures['scored']} scored responses, "
                    f"{figures['figures']} figures)"
                )
            if args.against:
                same = [p.read_bytes() for p in tables["cold"]] == [
                    p.read_bytes() for p in tables["against"]
                ]
                print(f"  tables {'identical' if same else 'DIFFERENT'}")


#: A fresh interpreter per report: ``ru_maxrss`` is then this report's peak, store open included.
REPORT = """
import json, resource, sys, time
from pathlib import Path
from medrealmm.report import write_report
from medrealmm.store import RunStore
started = time.perf_counter()
with RunStore(Path(sys.argv[1])) as store:
    result = write_report(store, Path(sys.argv[2]), resamples=int(sys.argv[3]))
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({
    "seconds": time.perf_counter() - started,
    "cpu_s": usage.ru_utime + usage.ru_stime,
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "scored": result.scored,
    "figures": len(result.figures),
}))
"""


def report_in_fresh_process(
    store: Path, out: Path, resamples: int, source: str, fonts: Path
) -> dict:
    env = dict(os.environ, MEDREALMM_FONT_CACHE=str(fonts))
    if source:
        env["PYTHONPATH"] = str(Path(source).resolve())
    done = subprocess.run(
        [sys.executable, "-c", REPORT, str(store), str(out), str(resamples)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


if __name__ == "__main__":
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    main()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
