"""Issue item 8: a release waits for review by default.

Releasing consultations not past both review passes, or rubrics no physician approved, is
refused unless asked for explicitly; the flag is recorded in the manifest and the card, and
the demo (whose review is simulated) sets it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from small_runs import reviewed_run
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.pipeline.demo import demo_settings
from medrealmm.pipeline.settings import load_settings


def _build(run: Path, out: Path, *extra: str):  # type: ignore[no-untyped-def]
    dua = run.parent / "DUA.md"
    dua.write_text("测试用数据使用协议。\n", encoding="utf-8")
    args = ["release", "build", str(run), str(out), "--version", "1.0", "--dua", str(dua), *extra]
    return CliRunner().invoke(app, args)


def test_an_unreviewed_release_is_refused_without_the_flag(tmp_path: Path) -> None:
    run, out = reviewed_run(tmp_path / "run", reviewed=False), tmp_path / "release"
    refused = _build(run, out)
    assert refused.exit_code == 2, refused.output
    line = " ".join(refused.output.split())
    assert line.startswith("error: the release waits for review: 3 consultations are not")
    assert "3 of 3 rubrics are not approved" in line and "--allow-unreviewed" in line
    assert not out.exists()  # nothing written

    allowed = _build(run, out, "--allow-unreviewed")
    assert allowed.exit_code == 0, allowed.output
    assert "released before review" in " ".join(allowed.output.split())
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["review"] == {
        "complete": False,
        "allow_unreviewed": True,
        "open": [
            "3 consultations are not review-approved (corpus.deid, not corpus.final)",
            "3 of 3 rubrics are not approved",
        ],
    }
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Released before review was complete** (`--allow-unreviewed`)" in card


def test_a_reviewed_release_needs_no_flag(tmp_path: Path) -> None:
    run, out = reviewed_run(tmp_path / "run", reviewed=True), tmp_path / "release"
    built = _build(run, out)
    assert built.exit_code == 0, built.output
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["review"] == {"complete": True, "allow_unreviewed": False, "open": []}
    assert "Released before review" not in (out / "README.md").read_text(encoding="utf-8")


def test_the_yaml_has_the_flag_and_the_demo_sets_it(tmp_path: Path) -> None:
    config = tmp_path / "pipeline.yaml"
    config.write_text("input: corpus\n", encoding="utf-8")
    assert load_settings(config).release.allow_unreviewed is False  # waits by default
    config.write_text("input: corpus\nrelease: {allow_unreviewed: true}\n", encoding="utf-8")
    assert load_settings(config).release.allow_unreviewed is True
    config.write_text("input: corpus\nrelease: {allow_unreviewd: true}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="allow_unreviewd"):
        load_settings(config)  # a typo is an error, never a silent default
    assert demo_settings(tmp_path / "demo").release.allow_unreviewed is True
