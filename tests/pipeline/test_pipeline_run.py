"""`medrealmm run --config pipeline.yaml`: the demo's chain with the models a YAML names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.store import RunStore, stages


@pytest.mark.slow
def test_run_goes_end_to_end_resumes_and_redoes_one_stage(demo_dir: Path, tmp_path: Path) -> None:
    shutil.copytree(demo_dir, tmp_path / "corpus")
    config = tmp_path / "pipeline.yaml"
    config.write_text(
        "input: corpus\nworkers: 1\nmodels: {privacy: offline, deid: null, mccp: offline}\n"
        "respondents: [{model: online}]\n",
        encoding="utf-8",
    )
    run = tmp_path / "run"
    runner = CliRunner()
    first = runner.invoke(app, ["run", str(run), "--config", str(config)])
    assert first.exit_code == 0, first.output
    assert (run / "report" / "index.html").is_file() and (run / "release").is_dir()
    with RunStore(run) as store:
        instances = store.keys(stages.MCCP_INSTANCE)
        assert instances and store.count(stages.EVAL_SCORE) == len(instances)
    again = runner.invoke(
        app, ["run", str(run), "--config", str(config), "--redo", "mccp", "--skip", "report"]
    )
    assert again.exit_code == 0, again.output
    assert "report: skipped" in again.output
    with RunStore(run) as store:
        assert store.keys(stages.MCCP_INSTANCE) == instances  # rebuilt from corpus.deid alike
