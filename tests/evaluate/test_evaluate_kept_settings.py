"""Every setting an evaluation's spec records is kept on resume; a conflicting one is refused."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate.provenance import RECORDED_SETTINGS, SettingConflict, load_specs
from medrealmm.evaluate.run import run_evaluation
from medrealmm.store import RunStore
from medrealmm.testing import FakeOpenAIServer

from .conftest import demo_instances, fill_store
from .test_evaluate_agents import models_yaml, responder, settings

#: option -> (value of the first run, a different value, what the spec records for the first)
CASES = {
    "--k": ("2", "1", 2),
    "--grader-images": ("off", "on", False),
    "--abstain": ("drop", "unmet", "drop"),
}


def test_every_recorded_setting_is_tested() -> None:
    options = {option for option, *_ in RECORDED_SETTINGS.values()}
    assert options == {*CASES, "model params", "grader params"}


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
    field = next(name for name, (flag, *_) in RECORDED_SETTINGS.items() if flag == option)
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


@pytest.mark.parametrize("role", ["model", "grader"])
def test_changed_decoding_params_are_refused_naming_both(role: str, tmp_path: Path) -> None:
    """The YAML gives them on every run: the same ones resume; others are refused, not
    recorded over replies or verdicts made with the old ones."""
    with FakeOpenAIServer(responder) as server, RunStore(tmp_path / "run") as store:
        fill_store(store, demo_instances(1))
        config = models_yaml(tmp_path, server)
        first = run_evaluation(store, settings(config))
        assert run_evaluation(store, settings(config)).eval_id == first.eval_id
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
        data["models"][0 if role == "model" else 1]["params"] = {"temperature": 0.7}
        config.write_text(yaml.safe_dump(data), encoding="utf-8")
        calls = len(server.requests)
        with pytest.raises(SettingConflict, match=rf"{role} params .*0\.0.*{role} params .*0\.7"):
            run_evaluation(store, settings(config))
        assert len(server.requests) == calls and set(load_specs(store)) == {first.eval_id}
