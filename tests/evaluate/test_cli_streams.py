"""Results on stdout, progress and notes on stderr: `cmd > file` keeps the answer,
`cmd 2>/dev/null` still prints it, and `--json -` is JSON alone on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from medrealmm._version import __version__

from .conftest import accept

SRC = str(Path(__file__).resolve().parents[2] / "src")
CLI = [sys.executable, "-c", "import sys; from medrealmm.cli import main; sys.exit(main())"]


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=env, timeout=600, check=False
    )


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "PYTHONPATH": SRC,
        "HOME": str(home),
        "MEDREALMM_PROGRESS": "1",  # progress on: it must go to stderr, not stdout
        "MEDREALMM_DUA_FILE": str(tmp_path / "config" / "dua.json"),
    }


def test_eval_run_score_report_put_results_on_stdout(
    release: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    accept(release)
    results, report = tmp_path / "results", tmp_path / "report"

    run = cli("eval", "run", str(release), "--out", str(results), env=env)
    assert run.returncode == 0, run.stderr
    assert "4 cases scored, 0 incomplete" in run.stdout
    assert "cases scored" not in run.stderr
    assert "respond offline-baseline" in run.stderr  # the progress bar's label

    score = cli("eval", "score", str(results), env=env)
    assert score.returncode == 0, score.stderr
    assert "Scores (0-100" in score.stdout and "offline-baseline" in score.stdout
    assert "Scores" not in score.stderr

    as_json = cli("eval", "score", str(results), "--json", "-", env=env)
    payload = json.loads(as_json.stdout)  # nothing but the JSON
    assert payload["rows"][0]["model"] == "offline-baseline"

    written = cli("report", str(results), str(report), env=env)
    assert written.returncode == 0, written.stderr
    assert "report written" in written.stdout and "report written" not in written.stderr

    quiet = cli("--quiet", "eval", "run", str(release), "--out", str(results), env=env)
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert "cases scored" in quiet.stdout

    missing = cli("--quiet", "eval", "score", str(tmp_path / "nowhere"), env=env)
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.startswith("error:")  # errors print even under --quiet


def test_version_and_help_without_type_noise(env: dict[str, str]) -> None:
    version = cli("--version", env=env)
    assert version.stdout.strip() == f"medrealmm {__version__}"
    shown = cli("eval", "score", "--help", env={**env, "COLUMNS": "100"}).stdout
    assert "<bool>" not in shown and "--help" in shown


@pytest.mark.slow
def test_demo_summary_on_stdout_progress_on_stderr(tmp_path: Path, env: dict[str, str]) -> None:
    done = cli("demo", "--out", str(tmp_path / "demo"), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "demo finished" in done.stdout and "report:" in done.stdout
    assert "rule-based floor" in done.stdout  # the baseline's scale, beside its number
    assert "demo finished" not in done.stderr and "de-identifying" in done.stderr
