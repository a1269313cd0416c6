"""``medrealmm demo``: the chain with offline specs over the bundled synthetic corpus."""

from __future__ import annotations

import shutil
from pathlib import Path

from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.pipeline.chain import CHAIN
from medrealmm.pipeline.contract import StageContext
from medrealmm.pipeline.runner import run_chain
from medrealmm.pipeline.settings import PipelineSettings, ReleaseSettings
from medrealmm.store import RunStore


def stage_input(out: Path) -> Path:
    """Copy the bundled corpus into the run folder so every path the run uses is its own."""
    target = out / "input"
    if not (target / CORPUS_FILE).exists():
        shutil.copytree(bundled_corpus_dir(), target, dirs_exist_ok=True)
    return target


def demo_settings(out: Path) -> PipelineSettings:
    """Every agent role on the offline baseline (the defaults), workers=1 for a small corpus.
    Nobody reviews the demo's cases or rubrics, so its release says it is unreviewed."""
    return PipelineSettings(
        input=stage_input(out), workers=1, release=ReleaseSettings(allow_unreviewed=True)
    )


def run_demo(out: Path | str) -> list[str]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    settings = demo_settings(out)
    with RunStore(out, writer=True) as store:
        reports = run_chain(StageContext(store, out, settings), CHAIN)
    return [line for report in reports for line in report.lines]
