"""Every generated bad input x every command that reads it: exit 2, one line naming the file,
no traceback, and a run folder that already held finished work keeps it."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from cases import CASES, BadInput, good_record, write_dataset
from typer.testing import CliRunner

from medrealmm.cli import app

#: Checks only ``validate`` makes (images, time order); the rest every reader makes.
VALIDATE_ONLY = ("image-", "timestamp-out-of-order")
COMMANDS = ("validate-file", "validate-dir", "mccp-extract", "corpus-build")


def _args(command: str, data: Path, run: Path) -> list[str]:
    jsonl = str(data / "consultations.jsonl")
    return {
        "validate-file": ["validate", jsonl],
        "validate-dir": ["validate", str(data)],
        "mccp-extract": ["mccp", "extract", str(data), str(run), "--from", "raw"],
        "corpus-build": ["corpus", "build", jsonl, str(run), "--workers", "1"],
    }[command]


def _rows(run: Path) -> list[tuple]:
    store = run / "store.sqlite"
    if not store.exists():
        return []
    with sqlite3.connect(store) as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        return sorted(
            (
                table,
                hashlib.sha256(
                    repr(db.execute(f"select * from {table}").fetchall()).encode()
                ).hexdigest(),
            )
            for table in tables
        )


def _applies(case: BadInput, command: str) -> bool:
    return command.startswith("validate") or not case.name.startswith(VALIDATE_ONLY)


PAIRS = [
    pytest.param(case, command, id=f"{command}:{case.name}")
    for case in CASES
    for command in COMMANDS
    if _applies(case, command)
]


@pytest.mark.parametrize(("case", "command"), PAIRS)
def test_bad_input_is_one_clear_line_and_loses_nothing(
    case: BadInput, command: str, tmp_path: Path
) -> None:
    data, run = tmp_path / "data", tmp_path / "run"
    if command in ("mccp-extract", "corpus-build"):  # finished work first, then the bad input
        write_dataset(data, [json.dumps(good_record("c0"), ensure_ascii=False).encode()])
        result = CliRunner().invoke(app, _args(command, data, run))
        assert result.exit_code == 0, result.output
        shutil.rmtree(data)
    case.build(data)
    before = _rows(run)
    result = CliRunner().invoke(app, _args(command, data, run))
    output = result.output.strip()
    assert result.exit_code == 2, output
    assert isinstance(result.exception, SystemExit | None), repr(result.exception)
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    assert "consultations.jsonl" in lines[0] and case.expect in lines[0]
    assert _rows(run) == before  # finished work is untouched


def test_there_are_at_least_sixty_cases() -> None:
    assert len(CASES) >= 60 and len(PAIRS) >= 3 * len(CASES)
