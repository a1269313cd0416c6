"""Grader calibration, before and after, on the labels of held-out cases.

The labelled cases of RUN (the review app's panel and any --labels files) are split in two by
case; the held-out half is graded twice by --grader, with the same requests but for the
few-shot examples drawn from the other half's physician verdicts (balanced met / not met, same
category and weight sign), and both are scored against the physicians (balanced F1, as
``medrealmm eval meta``). On the demo (``medrealmm demo --out demo-output``) the panel is
simulated, and the offline grader reads no examples, so its two columns are equal by
construction; give a model (``--grader NAME --models-config models.yaml``) to measure one.

    python benchmarks/grader_calibration.py demo-output [--grader NAME --models-config Y]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from medrealmm.evaluate.calibration import evaluate_calibration
from medrealmm.stats.meta_eval import ALL, ALL_PHYSICIANS, physician_spread
from medrealmm.store import RunStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a results or demo folder with physician labels")
    parser.add_argument("--labels", type=Path, action="append", default=[])
    parser.add_argument("--grader", default="offline")
    parser.add_argument("--models-config", type=Path)
    parser.add_argument("--per-class", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as scratch:  # the run folder is left as it was
        store_file = args.run / "store.sqlite" if args.run.is_dir() else args.run
        copy = Path(scratch) / "store.sqlite"
        shutil.copyfile(store_file, copy)
        started = time.perf_counter()
        with RunStore(copy) as store:
            result = evaluate_calibration(
                store,
                labels=args.labels,
                grader=args.grader,
                models_config=args.models_config,
                per_class=args.per_class,
                seed=args.seed,
                resamples=args.resamples,
            )
        seconds = time.perf_counter() - started
    print(
        f"grader {result.grader}: {result.held_out_cases} held-out cases judged, examples from "
        f"{result.calibration_cases} other cases ({result.examples} labelled verdicts), "
        f"{args.per_class} per class; {result.failed} malformed calls; {seconds:.1f} s"
    )
    print(f"{'rater':<36} {'items':>6} {'bal. F1':>8} {'95% CI':>15} {'F1 met':>7} {'F1 not':>7}")
    for row in result.rows:
        if row.reference != ALL_PHYSICIANS or row.axis != ALL:
            continue
        print(
            f"{row.rater:<36} {row.items:>6} {row.balanced_f1:>8.3f} "
            f"{row.f1_low:>7.3f}-{row.f1_high:<7.3f} {row.f1_met or 0:>7.3f} "
            f"{row.f1_not_met or 0:>7.3f}"
        )
    spread = physician_spread(result.rows)
    if spread:
        print(f"physicians against each other on the same items: {spread[0]:.3f}-{spread[1]:.3f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
