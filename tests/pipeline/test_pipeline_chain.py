"""The chain's shape: stage order, each stage's one declared input, and who runs it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.pipeline import CHAIN, MissingInputError, PipelineSettings, StageContext, run_chain
from medrealmm.pipeline import demo as demo_module
from medrealmm.store import RunStore, stages

EXPECTED = [
    ("ingest", None),
    ("corpus", stages.RAW),
    ("deid", stages.CORPUS_SAMPLED),
    ("review", stages.CORPUS_DEID),
    ("mccp", stages.CORPUS_DEID),
    ("rubric", stages.MCCP_INSTANCE),
    ("evaluate", stages.RUBRIC_ROUND),
    ("release", stages.CORPUS_DEID),
    ("report", stages.EVAL_SCORE),
]


def test_stage_order_and_declared_inputs() -> None:
    assert [(stage.name, stage.reads) for stage in CHAIN] == EXPECTED


def test_every_input_is_written_by_an_earlier_stage() -> None:
    written: set[str] = set()
    for stage in CHAIN:
        assert stage.reads is None or stage.reads in written, stage
        written.update(stage.writes)


def test_demo_runs_the_same_chain() -> None:
    assert demo_module.CHAIN is CHAIN


def test_mccp_input_is_a_setting_not_a_guess(tmp_path: Path) -> None:
    (mccp,) = [stage for stage in CHAIN if stage.name == "mccp"]
    settings = PipelineSettings(input=tmp_path, mccp_input=stages.CORPUS_FINAL)
    assert mccp.source(settings) == stages.CORPUS_FINAL


def test_a_stage_without_its_input_is_refused_not_redirected(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        ctx = StageContext(store, tmp_path, PipelineSettings(input=tmp_path))
        with pytest.raises(MissingInputError, match=r"'corpus\.sampled'"):
            run_chain(ctx, CHAIN, skip=("ingest", "corpus"))
        assert store.stages() == {}


def test_unknown_stage_names_are_refused(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        ctx = StageContext(store, tmp_path, PipelineSettings(input=tmp_path))
        with pytest.raises(ValueError, match="unknown stage"):
            run_chain(ctx, CHAIN, skip=("dedup",))


def test_run_names_a_bad_config_line(tmp_path: Path) -> None:
    config = tmp_path / "pipeline.yaml"
    config.write_text("input: corpus\nmodels:\n  mccp: offline\n  judge: offline\n")
    result = CliRunner().invoke(app, ["run", str(tmp_path / "run"), "--config", str(config)])
    assert result.exit_code == 2
    assert "pipeline.yaml:4" in result.output and "models.judge" in result.output
