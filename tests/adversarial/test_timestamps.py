"""Issue item 5: odd timestamps are a one-line error naming file, line and field, never a
traceback. An epoch number is refused (its unit and clock are unknown); local times and times
with a UTC offset are not mixed in one consultation (they cannot be ordered without a guess)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app


def _case(demo_corpus: Path) -> dict:
    return json.loads(demo_corpus.read_text(encoding="utf-8").splitlines()[0])


def _write(folder: Path, demo_dir: Path, *records: dict) -> Path:
    shutil.copytree(demo_dir / "images", folder / "images")
    path = folder / "consultations.jsonl"
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _stamp(record: dict, index: int, value: object) -> dict:
    record = json.loads(json.dumps(record))
    record["events"][index]["timestamp"] = value
    return record


@pytest.mark.parametrize(
    ("index", "value", "field", "words"),
    [
        (0, 1717200000, "events.0.timestamp", "is a number"),
        (2, 1717200000123.0, "events.2.timestamp", "is a number"),
        (1, "1717200000", "events.1.timestamp", "is a number"),
        (3, "2025-06-01T09:10:49+08:00", "events.3.timestamp", "has a UTC offset"),
    ],
    ids=["epoch-int", "epoch-ms-float", "epoch-text", "offset-among-naive"],
)
def test_odd_timestamps_are_one_line_errors(
    demo_dir: Path,
    demo_corpus: Path,
    tmp_path: Path,
    index: int,
    value: object,
    field: str,
    words: str,
) -> None:
    good = _case(demo_corpus)
    bad = _stamp(good, index, value) | {"id": "odd"}
    path = _write(tmp_path, demo_dir, good, bad)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert not isinstance(result.exception, TypeError)
    assert "Traceback" not in result.output
    assert f"consultations.jsonl:2: field '{field}'" in result.output.replace("\n", "")
    assert words in result.output.replace("\n", " ")


def test_naive_among_zoned_and_all_zoned(demo_dir: Path, demo_corpus: Path, tmp_path: Path) -> None:
    good = _case(demo_corpus)
    zoned = json.loads(json.dumps(good))
    for event in zoned["events"]:
        event["timestamp"] += "+08:00"
    zoned["id"] = "zoned"
    naive_after = _stamp(zoned, 2, good["events"][2]["timestamp"]) | {"id": "mixed"}
    path = _write(tmp_path, demo_dir, good, zoned, naive_after)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    text = result.output.replace("\n", " ")
    assert "consultations.jsonl:3: field 'events.2.timestamp'" in text and "lacks a UTC" in text
