"""``medrealmm demo``: the chain with offline specs over the bundled synthetic corpus."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from medrealmm.demo import (
    CORPUS_FILE,
    NEXT_DIR,
    bundled_corpus_dir,
    bundled_next_cases,
    bundled_panel_labels,
)
from medrealmm.pipeline.chain import CHAIN, stage_named
from medrealmm.pipeline.contract import Stage, StageContext
from medrealmm.pipeline.runner import run_chain, run_stage
from medrealmm.pipeline.settings import PipelineSettings, ReleaseSettings
from medrealmm.release.demo import release_demo
from medrealmm.release.withdrawals import default_register, record_withdrawal
from medrealmm.store import RunStore, stages

#: The demo's second release version: the generator's two added cases in, one case withdrawn.
NEXT_VERSION = "0.2"
NEXT_RELEASE_DIR = f"release-{NEXT_VERSION}"
#: a valid case of 0.1 (one challenge point), withdrawn in 0.2 at a simulated patient request
WITHDRAWN_CASE = "demo-032"
WITHDRAWN_ON = date(2025, 9, 1)


def stage_input(out: Path) -> Path:
    """Copy the bundled corpus into the run folder so every path the run uses is its own.
    The corpus file is copied on every run: version 0.2 appends to it, and a rerun of the
    demo starts again from 0.1's cases."""
    target = out / "input"
    if not (target / CORPUS_FILE).exists():
        shutil.copytree(
            bundled_corpus_dir(),
            target,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns(NEXT_DIR),
        )
    shutil.copyfile(bundled_corpus_dir() / CORPUS_FILE, target / CORPUS_FILE)
    return target


def add_next_cases(input_dir: Path) -> int:
    """Append the generator's next-version cases to the run's input, with their images;
    returns how many were new to it."""
    source = bundled_next_cases()
    corpus = input_dir / CORPUS_FILE
    have = {json.loads(line)["id"] for line in corpus.read_text("utf-8").splitlines() if line}
    lines = (source / CORPUS_FILE).read_text("utf-8").splitlines()
    new = [line for line in lines if line and json.loads(line)["id"] not in have]
    with corpus.open("a", encoding="utf-8", newline="\n") as handle:
        handle.writelines(f"{line}\n" for line in new)
    shutil.copytree(source / "images", input_dir / "images", dirs_exist_ok=True)
    return len(new)


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


def next_version(ctx: StageContext, chain: Sequence[Stage]) -> list[str]:
    """Version 0.2 of the demo release, as a maintainer makes one: the new cases join the
    input, a withdrawal is recorded, the chain runs again (only the new cases are worked
    on: every other row is reused) and 0.2 is released beside 0.1, its CHANGELOG listing
    the added and withdrawn cases. ``release/`` is 0.1 as published: a release holds its
    own copy of every row, so it is kept aside while the chain's input step clears the
    run's derived folders, and put back."""
    out, store = ctx.run_dir, ctx.store
    published, aside = out / "release", out / ".release.published"
    if aside.exists():
        shutil.rmtree(aside)
    if published.exists():
        published.rename(aside)
    try:
        added = add_next_cases(ctx.settings.input)
        register = default_register(out)
        record_withdrawal(store, register, WITHDRAWN_CASE, "simulated request", WITHDRAWN_ON)
        lines = [f"version {NEXT_VERSION}: {added} consultations added, {WITHDRAWN_CASE} withdrawn"]
        lines += [line for report in run_chain(ctx, chain) for line in report.lines]
        allow = ctx.settings.release.allow_unreviewed
        lines.append(
            release_demo(
                store, out, allow_unreviewed=allow, version=NEXT_VERSION, folder=NEXT_RELEASE_DIR
            )
        )
    finally:
        if aside.exists():
            if published.exists():
                shutil.rmtree(published)
            aside.rename(published)
    return lines


def run_demo(out: Path | str) -> list[str]:
    """The chain over the bundled corpus (release 0.1 in ``release/``), then version 0.2
    (``release-0.2/``), then the report, which compares the two on their shared cases."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    settings = demo_settings(out)
    split = next(i for i, stage in enumerate(CHAIN) if stage.name == "evaluate") + 1
    report = stage_named("report")
    with RunStore(out, writer=True) as store:
        store.set_meta(stages.DEMO_META, True)
        ctx = StageContext(store, out, settings)
        lines = [line for done in run_chain(ctx, CHAIN[:split]) for line in done.lines]
        lines.append(import_simulated_panel(store))
        later = [stage for stage in CHAIN[split:] if stage is not report]
        lines += [line for done in run_chain(ctx, later) for line in done.lines]
        lines += next_version(ctx, CHAIN[:split])
        lines += run_stage(report, ctx).lines
    return lines
