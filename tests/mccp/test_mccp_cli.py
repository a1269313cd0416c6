from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.schema import Instance
from medrealmm.store import RunStore, stages

runner = CliRunner()


def flat(output: str) -> str:
    """Rich wraps long lines at the terminal width; compare text with whitespace collapsed."""
    return " ".join(output.split())


def test_every_mccp_command_explains_itself() -> None:
    for command in ([], ["extract"], ["export-validation"], ["import-validation"]):
        result = runner.invoke(app, ["mccp", *command, "--help"])
        assert result.exit_code == 0, result.output
    assert "Cropper" in runner.invoke(app, ["mccp", "extract", "--help"]).output


def test_extract_then_validate_round_trip(tmp_path: Path, demo_dir: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["mccp", "extract", str(demo_dir), str(out), "--from", "raw"])
    assert result.exit_code == 0, result.output
    assert "offline baseline" in result.output
    lines = (out / "mccp" / "instances.jsonl").read_text(encoding="utf-8").splitlines()
    instances = [Instance.model_validate_json(line) for line in lines]
    assert len(instances) >= 33
    discarded = (out / "mccp" / "discarded.jsonl").read_text(encoding="utf-8").splitlines()
    assert {json.loads(line)["consultation_id"] for line in discarded} >= {
        "demo-bad-02-refund-close"
    }

    rerun = runner.invoke(app, ["mccp", "extract", str(demo_dir), str(out), "--from", "raw"])
    assert rerun.exit_code == 0 and "reused from earlier runs 40" in flat(rerun.output)

    sheet = tmp_path / "sheet.csv"
    result = runner.invoke(
        app, ["mccp", "export-validation", str(out), "--n", "4", "--seed", "2", "--to", str(sheet)]
    )
    assert result.exit_code == 0, result.output
    with sheet.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row, decision in zip(rows, ["接受", "接受", "接受", "拒绝"], strict=True):
        row["decision"] = decision
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = runner.invoke(
        app, ["mccp", "import-validation", str(out), str(sheet), "--reviewer", "dr-a"]
    )
    assert result.exit_code == 0, result.output
    assert "3/4 cases = 75.0%" in flat(result.output)


def test_bad_input_is_one_clear_error(tmp_path: Path, demo_dir: Path) -> None:
    result = runner.invoke(app, ["mccp", "extract", str(tmp_path / "nowhere"), str(tmp_path)])
    assert result.exit_code == 2 and "consultations.jsonl" in result.output

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "consultations.jsonl").write_text('{"id": "x", "department": "皮肤科"}\n')
    result = runner.invoke(app, ["mccp", "extract", str(corpus), str(tmp_path / "o1")])
    assert result.exit_code == 2 and "field 'events'" in flat(result.output)

    out = tmp_path / "o2"
    assert (
        runner.invoke(app, ["mccp", "extract", str(demo_dir), str(out), "--from", "raw"]).exit_code
        == 0
    )
    result = runner.invoke(app, ["mccp", "extract", str(corpus), str(out)])
    assert result.exit_code == 2 and "already holds a run" in flat(result.output)


@pytest.mark.slow
def test_demo_pipeline_runs_the_mccp_stage(demo_run: tuple[Path, list[str]]) -> None:
    out, summary = demo_run
    assert any(line.startswith("mccp: ") for line in summary)
    assert (out / "mccp" / "instances.jsonl").is_file()
    with RunStore(out) as store:
        assert store.count(stages.MCCP_INSTANCE) >= 33
