"""CLI output in a pipe is never wrapped mid-sentence; on a narrow terminal a cut table says so."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from medrealmm.cli.common import UNWRAPPED_WIDTH, make_console, print_table
from medrealmm.testing.synthetic_store import build_synthetic_store


def _wide_table(columns: int) -> Table:
    table = Table(title="wide")
    for i in range(columns):
        table.add_column(f"column-{i}", no_wrap=True)
    table.add_row(*(f"value-{i}" for i in range(columns)))
    return table


def test_eval_score_in_a_pipe_keeps_lines_and_headers_whole(tmp_path: Path) -> None:
    store = build_synthetic_store(tmp_path / "results", cases=6)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from medrealmm.cli import main; main()",
            "eval",
            "score",
            str(store.parent),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    lines = (done.stdout + done.stderr).splitlines()
    caption = [line for line in lines if line.startswith("* rule-based baseline")]
    assert caption and caption[0].rstrip().endswith("all k samples complete (n@k)")
    header = next(line for line in lines if "worst@k" in line)
    assert header.split()[-2:] == ["scored", "incompl"]
    assert not any("…" in line for line in lines)


def test_a_table_too_wide_for_the_terminal_says_how_to_widen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from medrealmm.cli import common

    notes = io.StringIO()
    monkeypatch.setattr(common, "console", Console(file=notes, width=200, color_system=None))
    out = io.StringIO()
    terminal = Console(file=out, force_terminal=True, width=60, color_system=None)
    print_table(_wide_table(8), target=terminal)
    assert "cut to fit 60 columns" in notes.getvalue() and "less -S" in notes.getvalue()
    assert "cut to fit" not in out.getvalue()  # the note is not part of the result

    notes.truncate(0)
    terminal = Console(file=io.StringIO(), force_terminal=True, width=200, color_system=None)
    print_table(_wide_table(3), target=terminal)
    assert "cut to fit" not in notes.getvalue()


def test_off_a_terminal_nothing_wraps_unless_columns_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    piped = make_console(terminal=False)
    assert piped.width == UNWRAPPED_WIDTH and piped.soft_wrap
    monkeypatch.setenv("COLUMNS", "72")
    assert make_console(terminal=False).width == 72
