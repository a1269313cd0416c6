"""The CLI: help everywhere, clear errors, and the demo command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app

runner = CliRunner()


def _commands(group: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    import typer.main

    click_group = typer.main.get_command(group)  # type: ignore[arg-type]
    found: list[tuple[str, ...]] = []

    def walk(cmd: object, path: tuple[str, ...]) -> None:
        found.append(path)
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, (*path, name))

    walk(click_group, prefix)
    return found


@pytest.mark.parametrize("path", _commands(app))
def test_every_command_has_help(path: tuple[str, ...]) -> None:
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


def test_validate_reports_file_line_and_field(tmp_path: Path, demo_corpus: Path) -> None:
    lines = demo_corpus.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[1])
    del bad["department"]
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(bad, ensure_ascii=False)]) + "\n", "utf-8")
    shutil.copytree(demo_corpus.parent / "images", tmp_path / "images")  # inside the dataset
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    flat = " ".join(result.output.split())
    assert "c.jsonl:2" in flat.replace(" ", "") or "c.jsonl:2" in result.output.replace("\n", "")
    assert "department" in flat


def test_validate_accepts_the_demo_corpus(demo_corpus: Path) -> None:
    result = runner.invoke(app, ["validate", str(demo_corpus)])
    assert result.exit_code == 0, result.output


def test_validate_refuses_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert "no consultations" in result.output and "Traceback" not in result.output
