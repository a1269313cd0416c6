"""``medrealmm demo``: the chain with offline specs over the bundled synthetic corpus."""

from __future__ import annotations

import shutil
from pathlib import Path

from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir, bundled_panel_labels
from medrealmm.pipeline.chain import CHAIN
from medrealmm.pipeline.contract import StageContext
from medrealmm.pipeline.runner import run_chain
from medrealmm.pipeline.settings import PipelineSettings, ReleaseSettings
from medrealmm.store import RunStore, stages


def stage_input(out: Path) -> Path:
    """Copy the bundled corpus into the run folder so every path the run uses is its own."""
    target = out / "input"
    if not (target / CORPUS_FILE).exists():
        shutil.copytree(bundled_corpus_dir(), target, dirs_exist_ok=True)
    return target


#: The demo's first consultations (by id) that take two challenge points: k = 2 beside the
#: paper's single t*, so the report's by-position stratum and case counts show both.
DEMO_POINTS, DEMO_POINTS_SLICE = 2, 10


def demo_settings(out: Path) -> PipelineSettings:
    """Every agent role on the offline baseline (the defaults), workers=1 for a small corpus.
    Nobody reviews the demo's cases or rubrics, so its release says it is unreviewed."""
    return PipelineSettings(
        input=stage_input(out),
        workers=1,
        mccp_points=DEMO_POINTS,
        mccp_points_slice=DEMO_POINTS_SLICE,
        release=ReleaseSettings(allow_unreviewed=True),
    )


def import_simulated_panel(store: RunStore) -> str:
    """The bundled simulated physician panel's labels as panel verdicts, flagged as simulated
    so the report says so (their noise model: ``medrealmm.testing.simulated_panel``)."""
    from medrealmm.evaluate.meta_eval import import_labels

    count = import_labels(store, bundled_panel_labels(), skip_unknown=True)
    if count:
        store.set_meta(stages.PANEL_SIMULATED_META, True)
    return f"panel: {count} simulated physician labels stored (for the meta-evaluation demo)"


def run_demo(out: Path | str) -> list[str]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    settings = demo_settings(out)
    split = next(i for i, stage in enumerate(CHAIN) if stage.name == "evaluate") + 1
    with RunStore(out, writer=True) as store:
        ctx = StageContext(store, out, settings)
        lines = [line for report in run_chain(ctx, CHAIN[:split]) for line in report.lines]
        lines.append(import_simulated_panel(store))
        lines += [line for report in run_chain(ctx, CHAIN[split:]) for line in report.lines]
    return lines
