"""Side-by-side timings for the statistics behind the report.

1. Vectorised bootstrap (one numpy draw of all resamples) against the same percentile bootstrap
   written as a Python loop, on identical data, seed and resample count.
2. Building every table and figure of the report from a synthetic run store of N cases, and
   the meta-evaluation (graders and physicians against the panel, with case-bootstrap CIs)
   inside it timed on its own.

Run: PYTHONPATH=src python benchmarks/report_build.py [--cases 200] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

from medrealmm.evaluate.meta_eval import meta_eval
from medrealmm.report import write_report
from medrealmm.stats import bootstrap_mean_ci
from medrealmm.store import RunStore
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
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()

    rng = random.Random(1)
    values = [rng.random() for _ in range(args.cases)]
    fast = timed(lambda: bootstrap_mean_ci(values, resamples=args.resamples, seed=0))
    slow = timed(lambda: loop_bootstrap(values, args.resamples, 0), repeat=1)
    interval = bootstrap_mean_ci(values, resamples=args.resamples, seed=0)
    low, high = loop_bootstrap(values, args.resamples, 0)
    print(f"bootstrap of {args.cases} cases x {args.resamples} resamples")
    print(f"  numpy    {fast * 1e3:8.1f} ms  CI [{interval.low:.4f}, {interval.high:.4f}]")
    print(f"  loop     {slow * 1e3:8.1f} ms  CI [{low:.4f}, {high:.4f}]")
    print(f"  speed-up {slow / fast:8.1f}x")

    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        path = build_synthetic_store(Path(folder) / "run", cases=args.cases)
        built = time.perf_counter() - start
        with RunStore(path) as store:
            start = time.perf_counter()
            result = write_report(store, Path(folder) / "report", resamples=args.resamples)
            reported = time.perf_counter() - start
            start = time.perf_counter()
            rows = meta_eval(store, resamples=args.resamples)
            meta_seconds = time.perf_counter() - start
    print(
        f"report of {args.cases} cases ({result.scored} scored responses, "
        f"{len(result.figures)} figures): {reported:.2f} s "
        f"(synthetic store built in {built:.2f} s)"
    )
    print(
        f"  of which the meta-evaluation (its panel of 3 on one model, 2 graders): "
        f"{len(rows)} rows with CIs in {meta_seconds:.2f} s"
    )


if __name__ == "__main__":
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    main()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
