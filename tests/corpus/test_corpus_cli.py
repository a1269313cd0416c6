"""``medrealmm corpus ...`` through typer's runner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.corpus import Manifest
from medrealmm.corpus.build import MANIFEST_FILE
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages

runner = CliRunner()


def _squeeze(text: str) -> str:
    """Rich wraps long lines at the terminal width; compare without any whitespace."""
    return "".join(text.split())


def test_every_command_explains_itself() -> None:
    for args in (
        ["corpus", "--help"],
        ["corpus", "build", "--help"],
        ["corpus", "review", "--help"],
        *(["corpus", "review", name, "--help"] for name in ("queue", "export", "import", "status")),
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, args
        assert "Usage" in result.output


def test_build_prints_the_summary_and_honours_overrides(demo_corpus: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["corpus", "build", str(demo_corpus), str(tmp_path), "--cap", "5", "--workers", "1"],
    )
    assert result.exit_code == 0, result.output
    assert "department_cap" in result.output and "refund_close=1" in result.output
    assert "offline-baseline (rule-based baseline)" in result.output
    manifest = Manifest.read(tmp_path / MANIFEST_FILE)
    assert manifest.config.balance.cap == 5 and manifest.balance_cap == 5


def test_build_with_config_file_and_no_agent(demo_corpus: Path, tmp_path: Path) -> None:
    config = tmp_path / "corpus.yaml"
    config.write_text("completeness:\n  max_turns: 12\nprivacy:\n  model: null\n", "utf-8")
    build = ["corpus", "build", str(demo_corpus), str(tmp_path / "o"), "--config", str(config)]
    # max_turns 12 drops most of the demo on purpose: a mass drop, allowed
    result = runner.invoke(app, [*build, "--allow-mass-drop"])
    assert result.exit_code == 0, result.output
    manifest = Manifest.read(tmp_path / "o" / MANIFEST_FILE)
    assert manifest.privacy_backend is None
    assert manifest.stages[1].dropped["too_many_turns"] > 1


def test_bad_config_names_the_line_and_field(demo_corpus: Path, tmp_path: Path) -> None:
    config = tmp_path / "corpus.yaml"
    config.write_text("completeness:\n  min_turns: 5\n  max_chars: -3\n", "utf-8")
    result = runner.invoke(
        app, ["corpus", "build", str(demo_corpus), str(tmp_path / "o"), "--config", str(config)]
    )
    assert result.exit_code == 2
    assert "corpus.yaml:3:field'completeness.max_chars'" in _squeeze(result.output)


def test_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "in.jsonl"
    bad.write_text('{"id": "x"}\n', "utf-8")
    result = runner.invoke(app, ["corpus", "build", str(bad), str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "in.jsonl:1:field'department'" in _squeeze(result.output)


def test_review_flow_from_queue_to_final(demo_corpus: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert runner.invoke(app, ["corpus", "build", str(demo_corpus), str(run)]).exit_code == 0
    result = runner.invoke(app, ["corpus", "review", "queue", str(run)])
    assert result.exit_code == 2 and "corpus.deid" in result.output  # deid has not run yet
    with RunStore(run) as store:  # stand in for the de-identification phase
        cases = list(store.iter(stages.CORPUS_SAMPLED, Consultation))
        store.put_many(stages.CORPUS_DEID, ((c.id, c) for c in cases))
    result = runner.invoke(app, ["corpus", "review", "queue", str(run)])
    assert result.exit_code == 0 and "queued 66 new review tasks" in result.output
    for reviewer in ("医生甲", "医生乙"):
        sheet = tmp_path / f"{reviewer}.jsonl"
        result = runner.invoke(app, ["corpus", "review", "export", str(run), str(sheet)])
        assert result.exit_code == 0, result.output
        rows = [json.loads(line) for line in sheet.read_text("utf-8").splitlines()]
        for row in rows:
            row.update(reviewer=reviewer, verdict="approve")
        sheet.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), "utf-8")
        result = runner.invoke(app, ["corpus", "review", "import", str(run), str(sheet)])
        assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["corpus", "review", "status", str(run)])
    assert "approved33,rejected0,pending0" in _squeeze(result.output)
    with RunStore(run) as store:
        assert store.count(stages.CORPUS_FINAL) == 33


def test_build_dry_run_counts_the_screening_calls_and_sends_and_writes_nothing(
    tmp_path: Path, demo_corpus: Path
) -> None:
    from medrealmm.testing import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        entry = {"name": "screen", "model": "screen", "base_url": server.base_url}
        models = tmp_path / "models.yaml"
        models.write_text(json.dumps({"models": [entry]}), encoding="utf-8")
        out = tmp_path / "out"
        args = ["corpus", "build", str(demo_corpus), str(out), "--limit", "3"]
        args += ["--privacy-model", "screen", "--models-config", str(models), "--dry-run"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert server.requests == []
    assert not out.exists()
    text = " ".join(result.output.split())
    assert "dry run for screen" in text and "corpus.privacy_screen:" in text
