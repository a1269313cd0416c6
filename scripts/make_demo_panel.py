"""Write the demo's simulated physician panel (src/medrealmm/demo/data/panel_labels.jsonl).

The labels are made from a demo run's grader verdicts by the documented noise model of
``medrealmm.testing.simulated_panel``; rerun this after changing the demo corpus, the offline
rubric generator or the offline grader (a test says when the shipped file is out of date).

    python scripts/make_demo_panel.py [--run DEMO_OUTPUT]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from medrealmm.demo import bundled_panel_labels
from medrealmm.pipeline.chain import CHAIN
from medrealmm.pipeline.contract import StageContext
from medrealmm.pipeline.demo import demo_settings
from medrealmm.pipeline.runner import run_chain
from medrealmm.store import RunStore
from medrealmm.testing.simulated_panel import write_panel_labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="an existing demo run (default: a fresh one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        run = args.run
        if run is None:
            run = Path(scratch)
            upto = next(i for i, s in enumerate(CHAIN) if s.name == "evaluate") + 1
            with RunStore(run, writer=True) as store:
                run_chain(StageContext(store, run, demo_settings(run)), CHAIN[:upto])
        count = write_panel_labels(run / "store.sqlite", bundled_panel_labels())
    print(f"{count} simulated labels written to {bundled_panel_labels()}")


if __name__ == "__main__":
    main()
