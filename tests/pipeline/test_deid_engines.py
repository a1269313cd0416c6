"""De-identification on a process pool masks exactly what it masks in one process."""

from __future__ import annotations

from pathlib import Path

import pytest

from medrealmm.deid.record import DeidRecord
from medrealmm.deid.stage import run_deid_stage
from medrealmm.engines import Engine, offload
from medrealmm.io import iter_jsonl
from medrealmm.llm import OfflineClient
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages


async def _deid(run: Path, demo_dir: Path, workers: int) -> tuple[Consultation, DeidRecord]:
    case = next(c for c in iter_jsonl(demo_dir / "consultations.jsonl", Consultation))
    with RunStore(run) as store, offload(Engine.LOCAL, workers) as pool:
        store.set_meta(stages.image_root_key(stages.CORPUS_SAMPLED), str(demo_dir))
        store.replace({stages.CORPUS_SAMPLED: [(case.id, case)]})
        stats = await run_deid_stage(store, run, OfflineClient(), offload=pool)
        assert stats.failed == 0, stats.errors
        masked = store.get(stages.CORPUS_DEID, case.id, Consultation)
        record = store.get(stages.DEID_RECORD, case.id, DeidRecord)
    assert masked is not None and record is not None
    return masked, record


@pytest.mark.slow
async def test_processes_mask_the_same_boxes_as_one_worker(demo_dir: Path, tmp_path: Path) -> None:
    one = await _deid(tmp_path / "one", demo_dir, 1)
    two = await _deid(tmp_path / "two", demo_dir, 2)
    assert one[0] == two[0]
    assert [i.boxes for i in one[1].images] == [i.boxes for i in two[1].images]
