"""A run's release and report never outlive the rows they were made from: the store's one
hook removes them before any row write, and only those made from the stage written."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import BaseModel

from medrealmm.store import RunStore, stages
from medrealmm.store.derived import DERIVED, derived_for

SECRET = "张三 13800138000"  # stands for patient text: never in a message


class Row(BaseModel):
    text: str


def _outputs(run: Path) -> None:
    """What the chain's release and report steps leave in a run folder."""
    for name, marker in DERIVED.items():
        (run / name).mkdir(exist_ok=True)
        (run / name / marker).write_text("{}", encoding="utf-8")
        (run / name / "data.txt").write_text("made from the rows", encoding="utf-8")


def _left(run: Path) -> set[str]:
    return {name for name in DERIVED if (run / name).exists()}


def test_the_table_names_what_each_stage_makes() -> None:
    for stage in (stages.RAW, stages.CORPUS_DEID, stages.CORPUS_FINAL, stages.MCCP_INSTANCE):
        assert derived_for(stage) == ("release", "report")
    assert derived_for(stages.RUBRIC_ROUND) == derived_for(stages.RUBRIC_FINAL)
    assert derived_for(stages.RELEASE_WITHDRAWN) == ("release", "report")
    for stage in (
        stages.EVAL_RESPONSE,
        stages.EVAL_VERDICT,
        stages.EVAL_SCORE,
        stages.EVAL_SPEC,
        stages.PANEL_VERDICT,
        stages.CORPUS_REVIEW_TASK,
        stages.CORPUS_REVIEW_AUDIT,
        stages.CORPUS_REVIEW_DECISION,
        stages.MCCP_VALIDATION,
        stages.RUBRIC_FEEDBACK,
    ):
        assert derived_for(stage) == ("report",), stage
    assert derived_for("some.new.stage") == ("release", "report")  # unknown: both go


WRITES: dict[str, Callable[[RunStore, str], None]] = {
    "put": lambda s, stage: s.put(stage, "k2", Row(text=SECRET)),
    "put failed": lambda s, stage: s.put(stage, "k2", None, status="failed", error=SECRET),
    "put_many": lambda s, stage: s.put_many(stage, [("k2", Row(text=SECRET))]),
    "replace": lambda s, stage: s.replace({stage: [("k1", Row(text=SECRET))]}),
    "clear": lambda s, stage: s.clear([stage]),
    "delete": lambda s, stage: s.delete(stage, "k1"),
}


@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("stage", [stages.CORPUS_DEID, stages.EVAL_SCORE])
def test_a_row_write_removes_what_was_made_from_its_stage(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, write: str, stage: str
) -> None:
    with RunStore(tmp_path) as store:
        store.put(stage, "k1", Row(text=SECRET))
        _outputs(tmp_path)
        with caplog.at_level(logging.WARNING, "medrealmm.store"):
            WRITES[write](store, stage)
    kept = {"release"} if stage == stages.EVAL_SCORE else set()  # a release is not made from it
    assert _left(tmp_path) == kept
    gone = sorted(set(DERIVED) - kept)
    assert f"rows of stage {stage} changed: removed" in caplog.text
    assert all(str(tmp_path / name) in caplog.text for name in gone)
    assert "rebuild with" in caplog.text
    assert SECRET not in caplog.text and "k1" not in caplog.text and "k2" not in caplog.text


def test_rows_dropped_as_stale_remove_what_their_stage_made(tmp_path: Path) -> None:
    """An evaluation-only write that drops rows of a release's stage removes the release."""
    with RunStore(tmp_path) as store:
        store.put(stages.EVAL_SPEC, "e", Row(text="spec"))
        store.put(stages.RUBRIC_FINAL, "i", Row(text="R*"), sources=[(stages.EVAL_SPEC, "e")])
        _outputs(tmp_path)
        store.put(stages.EVAL_SPEC, "e", Row(text="another spec"))
        assert store.keys(stages.RUBRIC_FINAL) == set() and _left(tmp_path) == set()
        store.put(stages.RUBRIC_FINAL, "i", Row(text="R*"), sources=[(stages.RAW, "c")])
        _outputs(tmp_path)
        assert store.prune_stale(stages.RUBRIC_FINAL) == [(stages.RUBRIC_FINAL, "i")]
        assert _left(tmp_path) == set()


def test_reads_and_writes_that_change_nothing_remove_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with RunStore(tmp_path) as store:
        store.put(stages.CORPUS_DEID, "k", Row(text="x"))
        _outputs(tmp_path)
        with caplog.at_level(logging.WARNING, "medrealmm.store"):
            store.get(stages.CORPUS_DEID, "k", Row)
            store.get_raw(stages.CORPUS_DEID, "k")
            list(store.iter(stages.CORPUS_DEID, Row))
            list(store.items(stages.CORPUS_DEID, Row))
            list(store.fields(stages.CORPUS_DEID, ["text"]))
            store.keys(stages.CORPUS_DEID), store.count(stages.CORPUS_DEID), store.stages()
            store.raw_rows(stages.CORPUS_DEID), store.failures(stages.CORPUS_DEID)
            store.is_built(stages.CORPUS_DEID), store.usage()
            store.put_many(stages.CORPUS_DEID, [])  # an empty batch
            assert store.prune_stale(stages.CORPUS_DEID) == []  # nothing stale
            store.set_meta("note", 1)  # meta is not rows
    with RunStore(tmp_path):
        pass
    assert _left(tmp_path) == set(DERIVED) and caplog.text == ""


def test_a_folder_the_chain_did_not_write_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "release").mkdir()
    (tmp_path / "release" / "mine.txt").write_text("not a release", encoding="utf-8")
    with RunStore(tmp_path) as store:
        store.put(stages.RAW, "k", Row(text="x"))
    assert (tmp_path / "release" / "mine.txt").is_file()
