"""Every setting an evaluation's spec records is kept on resume; a conflicting one is refused."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate.provenance import RECORDED_SETTINGS, load_specs
from medrealmm.store import RunStore

#: option -> (value of the first run, a different value, what the spec records for the first)
CASES = {
    "--k": ("2", "1", 2),
    "--grader-images": ("off", "on", False),
    "--abstain": ("drop", "unmet", "drop"),
}


def test_every_recorded_setting_is_tested() -> None:
    assert {option for option, _ in RECORDED_SETTINGS.values()} == set(CASES)


def _specs(out: Path) -> dict[str, dict[str, object]]:
    with RunStore(out, create=False) as store:
        return {key: spec.model_dump(mode="json") for key, spec in load_specs(store).items()}


def _rows(out: Path) -> list[str]:
    """The store's rows, less when each was written: opening a results folder puts its
    benchmark's instances again, unchanged."""
    with sqlite3.connect(out / "store.sqlite") as db:
        return sorted(re.sub(r",'[0-9: -]+'\);$", ");", row) for row in db.iterdump())


@pytest.mark.parametrize("option", list(CASES))
def test_a_recorded_setting_is_kept_on_resume_and_another_refused(
    option: str, builder: Path, tmp_path: Path
) -> None:
    first, other, recorded = CASES[option]
    field = next(name for name, (flag, _) in RECORDED_SETTINGS.items() if flag == option)
    out = tmp_path / "results"
    run = ["eval", "run", str(builder), "--out", str(out), "--model", "offline", "--limit", "2"]
    made = CliRunner().invoke(app, [*run, option, first])
    assert made.exit_code == 0, made.output
    specs = _specs(out)
    assert [spec[field] for spec in specs.values()] == [recorded]

    resumed = CliRunner().invoke(app, run)  # left out: the recorded value, the same spec
    assert resumed.exit_code == 0, resumed.output
    assert {key: spec[field] for key, spec in _specs(out).items()} == {
        key: spec[field] for key, spec in specs.items()
    }

    before = _rows(out)
    refused = CliRunner().invoke(app, [*run, option, other])
    assert refused.exit_code == 2
    lines = [line for line in refused.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in refused.output
    assert f"{option} {first}" in lines[0] and f"{option} {other}" in lines[0]
    assert _rows(out) == before  # nothing written
