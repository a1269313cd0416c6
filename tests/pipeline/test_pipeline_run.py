"""`medrealmm run --config pipeline.yaml`: the demo's chain with the models a YAML names."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.store import RunStore, stages


def offline_config(demo_dir: Path, tmp_path: Path) -> Path:
    """A copy of the demo corpus and a pipeline YAML over it with offline models only."""
    shutil.copytree(demo_dir, tmp_path / "corpus")
    (tmp_path / "DUA.md").write_text("# 测试数据使用协议\n\n仅用于本测试。\n", encoding="utf-8")
    config = tmp_path / "pipeline.yaml"
    config.write_text(
        "input: corpus\nworkers: 1\nmodels: {privacy: offline, deid: null, mccp: offline}\n"
        "respondents: [{model: online}]\nrelease: {dua: DUA.md}\n",
        encoding="utf-8",
    )
    return config


@pytest.mark.slow
def test_run_goes_end_to_end_resumes_and_redoes_one_stage(demo_dir: Path, tmp_path: Path) -> None:
    config = offline_config(demo_dir, tmp_path)
    run = tmp_path / "run"
    runner = CliRunner()
    first = runner.invoke(app, ["run", str(run), "--config", str(config)])
    assert first.exit_code == 0, first.output
    assert (run / "report" / "index.html").is_file()
    assert not (run / "release").exists()  # nothing reviewed: the release waits for review
    assert "release: refused: the release waits for review" in " ".join(first.output.split())
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


def test_limit_runs_the_first_consultations_through_every_stage(
    demo_dir: Path, tmp_path: Path
) -> None:
    config = offline_config(demo_dir, tmp_path)
    run = tmp_path / "run"
    args = ["run", str(run), "--config", str(config), "--limit", "2"]
    result = CliRunner().invoke(app, [*args, "--skip", "release", "--skip", "report"])
    assert result.exit_code == 0, result.output
    assert "the first 2" in result.output
    first_two = [
        json.loads(line)["id"]
        for line in (demo_dir / "consultations.jsonl").read_text(encoding="utf-8").splitlines()
    ][:2]
    with RunStore(run) as store:
        assert sorted(store.keys(stages.RAW)) == sorted(first_two)
        assert store.keys(stages.CORPUS_DEID) <= set(first_two)
        sources = {i.split("#")[0] for i in store.keys(stages.MCCP_INSTANCE)}
        assert all(any(s.startswith(c) for c in first_two) for s in sources)


def test_dry_run_prints_the_calls_of_every_agent_and_sends_and_writes_nothing(
    demo_dir: Path, tmp_path: Path
) -> None:
    from medrealmm.testing import FakeOpenAIServer

    shutil.copytree(demo_dir, tmp_path / "corpus")
    with FakeOpenAIServer() as server:
        entry = {"name": "remote", "model": "remote", "base_url": server.base_url}
        (tmp_path / "models.yaml").write_text(json.dumps({"models": [entry]}), encoding="utf-8")
        config = tmp_path / "pipeline.yaml"
        config.write_text(
            "input: corpus\nworkers: 1\nmodels_config: models.yaml\n"
            "models: {privacy: offline, deid: null, mccp: remote, rubric: remote, "
            "grader: remote}\nrespondents: [{model: online}]\n",
            encoding="utf-8",
        )
        run = tmp_path / "run"
        args = ["run", str(run), "--config", str(config), "--limit", "2", "--dry-run"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert server.requests == []  # nothing sent
    assert not run.exists()  # nothing written
    out = " ".join(result.output.split())
    for task in ("mccp.cropper", "mccp.verifier", "rubric.generator", "evaluate.grader"):
        assert f"{task}:" in out and "calls to make" in out
    assert "dry run for remote" in out and "prompt tokens" in out
