"""Shards cut at line boundaries keep absolute line numbers on every engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from medrealmm.corpus import CompletenessConfig
from medrealmm.corpus.engines import run_screen
from medrealmm.corpus.screen import plan_shards, row_error


def test_shards_cover_the_file_exactly(demo_corpus: Path, tmp_path: Path) -> None:
    text = demo_corpus.read_text(encoding="utf-8").rstrip("\n")  # no trailing newline
    lines = text.split("\n")
    source = tmp_path / "c.jsonl"
    source.write_text("\n".join([*lines[:5], "", *lines[5:]]), encoding="utf-8")
    shards = plan_shards(source, lines_per_shard=7)
    assert [s.first_line for s in shards] == list(range(1, len(lines) + 2, 7))
    assert sum(s.lines for s in shards) == len(lines) + 1
    assert shards[-1].end == source.stat().st_size
    rows = run_screen(shards, CompletenessConfig(), workers=2)
    assert [r["line"] for r in rows] == [n for n in range(1, len(lines) + 2) if n != 6]
    whole = run_screen(plan_shards(source), CompletenessConfig(), workers=1)
    assert rows == whole


@pytest.mark.parametrize("workers", [1, 2])
def test_an_error_deep_in_a_later_shard_names_its_absolute_line(
    demo_corpus: Path, tmp_path: Path, workers: int
) -> None:
    lines = demo_corpus.read_text(encoding="utf-8").splitlines()
    lines[30] = "{not json"
    source = tmp_path / "c.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = run_screen(plan_shards(source, 8), CompletenessConfig(), workers=workers)
    bad = [r for r in rows if r["error"]]
    assert len(bad) == 1
    error = row_error(str(source), bad[0])
    assert (error.line, error.field) == (31, "<json>")
