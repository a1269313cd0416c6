"""A command that continues a run refuses a folder with no store instead of creating one."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.store import RunStore, existing_store


def test_create_false_refuses_a_missing_store_and_writes_nothing(tmp_path: Path) -> None:
    typo = tmp_path / "runn"
    with pytest.raises(FileNotFoundError, match="holds no run store"):
        RunStore(typo, create=False)
    assert not typo.exists()
    with RunStore(tmp_path / "run"):
        pass
    assert existing_store(tmp_path / "run").name == "store.sqlite"


@pytest.mark.parametrize(
    "argv",
    [
        ["deid", "run", "{run}"],
        ["corpus", "review", "status", "{run}"],
        ["report", "{run}", "{run}-report"],
    ],
)
def test_cli_on_a_mistyped_run_folder_is_a_clear_error(tmp_path: Path, argv: list[str]) -> None:
    typo = tmp_path / "runn"
    result = CliRunner().invoke(app, [a.format(run=typo) for a in argv])
    assert result.exit_code != 0
    assert "no run store" in result.output, result.output
    assert "Traceback" not in result.output
    assert not typo.exists()


def test_limit_runs_corpus_and_deid_on_the_first_units_only(
    demo_corpus: Path, tmp_path: Path
) -> None:
    from medrealmm.store import stages

    run = tmp_path / "run"
    runner = CliRunner()
    built = runner.invoke(app, ["corpus", "build", str(demo_corpus), str(run), "--limit", "12"])
    assert built.exit_code == 0, built.output
    with RunStore(run) as store:
        sampled = store.count(stages.CORPUS_SAMPLED)
        dropped = store.count(stages.CORPUS_DROPPED)
    assert 0 < sampled + dropped <= 12
    masked = runner.invoke(app, ["deid", "run", str(run), "--no-llm", "--limit", "2"])
    assert masked.exit_code == 0, masked.output
    with RunStore(run) as store:
        assert store.count(stages.CORPUS_DEID) == min(2, sampled)
