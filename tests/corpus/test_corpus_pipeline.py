"""The corpus and review-queue stages of the chain."""

from __future__ import annotations

from pathlib import Path

import pytest

from medrealmm.pipeline import MissingInputError, PipelineSettings, StageContext, run_stage
from medrealmm.pipeline import stage_named as stage
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages


def test_corpus_then_review_queue_after_deid(demo_dir: Path, tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        ctx = StageContext(store, tmp_path, PipelineSettings(input=demo_dir, workers=1))
        with pytest.raises(MissingInputError, match="'raw'"):
            run_stage(stage("corpus"), ctx)
        run_stage(stage("ingest"), ctx)
        (line,) = run_stage(stage("corpus"), ctx).lines
        assert line == "corpus: 40 raw -> 33 sampled, 7 dropped with reasons"
        with pytest.raises(MissingInputError, match=r"'corpus\.deid'"):
            run_stage(stage("review"), ctx)
        cases = list(store.iter(stages.CORPUS_SAMPLED, Consultation))
        store.put_many(stages.CORPUS_DEID, ((c.id, c) for c in cases))  # as de-id would
        assert "66 tasks added" in run_stage(stage("review"), ctx).lines[0]
        assert "0 tasks added" in run_stage(stage("review"), ctx).lines[0]  # repeats nothing
