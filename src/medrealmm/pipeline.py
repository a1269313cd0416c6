"""The demo pipeline: each phase's offline run, chained over the bundled corpus.

Each stage reads the previous stage's output from the run store and writes its own, so a
rerun resumes where the last one stopped.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from medrealmm.corpus import ReviewConfig, build_corpus
from medrealmm.corpus import review as review_queue
from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.evaluate import evaluate_demo
from medrealmm.io import iter_jsonl
from medrealmm.mccp import run_demo_stage as mccp_demo_stage
from medrealmm.release.demo import release_demo
from medrealmm.report import write_report
from medrealmm.rubric.stage import run_demo_stage as rubric_demo_stage
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages

RAW_STAGE = stages.RAW
CORPUS_CHAIN = (stages.CORPUS_FINAL, stages.CORPUS_DEID, stages.CORPUS_SAMPLED, stages.RAW)


def latest_corpus_stage(store: RunStore) -> str:
    """The most processed corpus stage that has rows: what Phase 2 should read."""
    for stage in CORPUS_CHAIN:
        if store.count(stage):
            return stage
    return stages.RAW


def stage_input(out: Path) -> Path:
    """Copy the bundled corpus into the run folder so every path the run uses is its own."""
    source = bundled_corpus_dir()
    target = out / "input"
    if not (target / CORPUS_FILE).exists():
        shutil.copytree(source, target, dirs_exist_ok=True)
    return target


def load_raw(store: RunStore, corpus_dir: Path) -> int:
    if store.count(RAW_STAGE):
        return store.count(RAW_STAGE)
    store.put_many(
        RAW_STAGE, ((c.id, c) for c in iter_jsonl(corpus_dir / CORPUS_FILE, Consultation))
    )
    return store.count(RAW_STAGE)


def run_corpus_stage(store: RunStore, corpus_dir: Path, out: Path) -> str:
    manifest = build_corpus(corpus_dir / CORPUS_FILE, out, store=store, workers=1)
    first, last = manifest.stages[0], manifest.stages[-1]
    dropped = sum(sum(stage.dropped.values()) for stage in manifest.stages)
    return f"corpus: {first.input} raw -> {last.output} sampled, {dropped} dropped with reasons"


def run_review_queue_stage(store: RunStore) -> str:
    """Queue Φ_rev tasks for the masked corpus; physicians decide them (CLI or review app)."""
    if not store.count(stages.CORPUS_DEID):
        return "review queue: waiting for corpus.deid"
    added = review_queue.enqueue(store, ReviewConfig())
    status = review_queue.advance(store, ReviewConfig())
    return (
        f"review queue: {added} tasks added; {status.approved} approved,"
        f" {status.pending_cases} cases awaiting physicians"
    )


def run_demo(out: Path | str) -> list[str]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    corpus_dir = stage_input(out)
    summary: list[str] = []
    with RunStore(out) as store:
        store.set_meta(stages.image_root_key(stages.RAW), str(corpus_dir))
        n = load_raw(store, corpus_dir)
        summary.append(f"raw consultations loaded: {n}")
        # Each phase appends its offline stage here, in chain order:
        # corpus -> deid -> review queue -> mccp -> rubric -> evaluate -> report.
        summary.append(run_corpus_stage(store, corpus_dir, out))
        summary.append(_deid_stage(store, out))
        summary.append(run_review_queue_stage(store))  # belongs right after de-identification
        summary.extend(mccp_demo_stage(store, out))
        summary.extend(rubric_demo_stage(store, out))
        summary.extend(evaluate_demo(store))
        summary.append(release_demo(store, out))  # releases what the chain produced
        report = write_report(store, out / "report")  # the demo ends with the report
        summary.append(
            f"report: {report.html} ({len(report.figures)} figures, "
            f"{report.scored} scored responses, {report.incomplete} incomplete)"
        )
    return summary


def _deid_stage(store: RunStore, out: Path) -> str:
    from medrealmm.deid.stage import run_deid_stage
    from medrealmm.llm import build_client, resolve_spec

    client = build_client(resolve_spec("offline"), cache=store.cache)
    stats = asyncio.run(run_deid_stage(store, out, client))
    return f"de-identified consultations: {store.count(stages.CORPUS_DEID)} ({stats.failed} failed)"
