"""`medrealmm report RUN --add RUN2`: one leaderboard over runs of the same benchmark."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate import EvalSettings, run_evaluation
from medrealmm.evaluate.source import results_store
from medrealmm.llm import OFFLINE_NAME
from medrealmm.release.dua import record_acceptance

from .conftest import accept


def evaluate(release: Path, out: Path, *settings: EvalSettings) -> Path:
    store, _ = results_store(release, out)
    with store:
        for one in settings:
            run_evaluation(store, one)
    return out


def test_runs_of_one_release_make_one_leaderboard(release: Path, tmp_path: Path) -> None:
    accept(release)
    a = evaluate(release, tmp_path / "a", EvalSettings(model="offline"), EvalSettings("online"))
    b = evaluate(release, tmp_path / "b", EvalSettings(model="offline", images=False))
    runner = CliRunner()
    args = ["report", str(a), str(tmp_path / "rep"), "--add", str(b), "--resamples", "20"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    table = json.loads((tmp_path / "rep" / "tables" / "overall.json").read_text("utf-8"))
    rows = {(r["model"], r["images"]) for r in table["rows"]}
    assert rows == {(OFFLINE_NAME, True), (OFFLINE_NAME, False), ("online", True)}
    images = json.loads((tmp_path / "rep" / "tables" / "images.json").read_text("utf-8"))
    assert [r["model"] for r in images["rows"]] == [OFFLINE_NAME]  # Fig 5 across the two runs

    clash = runner.invoke(app, ["report", str(a), str(tmp_path / "r2"), "--add", str(a)])
    assert clash.exit_code == 2 and "more than one run" in " ".join(clash.output.split())


def test_runs_of_different_benchmarks_are_refused(release: Path, tmp_path: Path) -> None:
    accept(release)
    a = evaluate(release, tmp_path / "a", EvalSettings(model="offline"))
    other = tmp_path / "other-release"
    shutil.copytree(release, other)
    manifest = json.loads((other / "manifest.json").read_text("utf-8"))
    manifest["name"] = "another-benchmark"  # another version of one release is compared
    (other / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    record_acceptance(
        other / "DUA.md",
        name="研究员",
        dataset="another-benchmark",
        release="another-benchmark 1.0",
    )
    b = evaluate(other, tmp_path / "b", EvalSettings(model="offline", images=False))
    result = CliRunner().invoke(app, ["report", str(a), str(tmp_path / "rep"), "--add", str(b)])
    assert result.exit_code == 2 and "one benchmark" in " ".join(result.output.split())
