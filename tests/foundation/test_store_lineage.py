"""Lineage: a row made from other rows goes when they change or vanish, with its descendants."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from medrealmm.store import RunStore


class Row(BaseModel):
    text: str


def _chain(store: RunStore) -> None:
    store.put_many("a", [("1", Row(text="one")), ("2", Row(text="two"))])
    for key in ("1", "2"):
        store.put("b", key, Row(text=f"b{key}"), sources=[("a", key)])
        store.put("c", f"{key}-x", Row(text=f"c{key}"), sources=[("b", key)])


def test_a_changed_source_drops_its_descendants_in_the_same_write(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        _chain(store)
        store.put("a", "1", Row(text="one, edited"))
        assert store.keys("b") == {"2"} and store.keys("c") == {"2-x"}
        store.put("a", "2", Row(text="two"))  # same content: nothing goes
        assert store.keys("b") == {"2"}


def test_replace_drops_what_was_made_from_removed_or_changed_rows(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        _chain(store)
        store.replace({"a": [("1", Row(text="one"))]})  # 2 filtered out on a rebuild
        assert store.keys("b") == {"1"} and store.keys("c") == {"1-x"}
        assert store.is_built("a")


def test_delete_and_clear_cascade(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        _chain(store)
        store.delete("b", "1")
        assert store.keys("c") == {"2-x"}
        store.clear(["a"])
        assert store.stages() == {} and not store.is_built("a")


def test_prune_stale_catches_sources_changed_behind_its_back(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        _chain(store)
        store.connection().execute("UPDATE records SET payload='{\"text\":\"x\"}' WHERE key='2'")
        assert store.prune_stale("b") == [("b", "2"), ("c", "2-x")]
        assert store.keys("b") == {"1"}
