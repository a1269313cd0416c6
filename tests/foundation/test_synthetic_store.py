"""The synthetic store writes a batch of cases a transaction: its rows must not depend on it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from medrealmm.schema import Instance, Rubric
from medrealmm.store import RunStore, stages
from medrealmm.testing.synthetic_store import build_synthetic_store


def rows(path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute(
            "SELECT stage, key, status, payload, error FROM records ORDER BY stage, rowid"
        ).fetchall()


def test_rows_and_their_order_do_not_depend_on_the_batch(tmp_path: Path) -> None:
    one = build_synthetic_store(tmp_path / "one", cases=7, batch=1)
    some = build_synthetic_store(tmp_path / "some", cases=7, batch=3)
    whole = build_synthetic_store(tmp_path / "whole", cases=7, batch=500)
    assert rows(one) == rows(some) == rows(whole)
    assert len(rows(whole)) > 7 * 10


def test_put_many_still_drops_the_children_of_a_changed_source(tmp_path: Path) -> None:
    """``put_many`` skips the per-row child check only while no row was made from its stage."""
    path = build_synthetic_store(tmp_path / "run", cases=2)
    with RunStore(path) as store:
        instance = store.get(stages.MCCP_INSTANCE, "case-000", Instance)
        rubric = store.get(stages.RUBRIC_FINAL, "case-000", Rubric)
        assert instance is not None and rubric is not None
        source = [(stages.MCCP_INSTANCE, "case-000")]
        store.put(stages.RUBRIC_FINAL, "child", rubric, sources=source)
        changed = instance.model_copy(update={"target_reply": "另一句回复"})
        store.put_many(stages.MCCP_INSTANCE, [("case-000", changed)])
        assert store.get(stages.RUBRIC_FINAL, "child", Rubric) is None
