"""The corpus and review-queue steps of the demo pipeline."""

from __future__ import annotations

from pathlib import Path

from medrealmm.pipeline import run_corpus_stage, run_review_queue_stage
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages


def test_demo_steps_build_the_corpus_then_queue_review_after_deid(
    demo_dir: Path, tmp_path: Path
) -> None:
    with RunStore(tmp_path) as store:
        line = run_corpus_stage(store, demo_dir, tmp_path)
        assert line == "corpus: 40 raw -> 33 sampled, 7 dropped with reasons"
        assert run_review_queue_stage(store) == "review queue: waiting for corpus.deid"
        cases = list(store.iter(stages.CORPUS_SAMPLED, Consultation))
        store.put_many(stages.CORPUS_DEID, ((c.id, c) for c in cases))  # as de-id would
        assert "66 tasks added" in run_review_queue_stage(store)
        assert "0 tasks added" in run_review_queue_stage(store)  # rerun repeats nothing
