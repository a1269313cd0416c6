"""`eval run` names why calls failed, grouped with the fix, and exits non-zero while they remain."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.store import RunStore
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import demo_instances, fill_store


def test_failed_calls_are_summarised_by_reason_and_exit_non_zero(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with RunStore(run_dir) as store:
        fill_store(store, demo_instances(1))

    def reply(body: dict[str, Any]) -> FakeReply:
        if "response_format" in body:
            return FakeReply(status=400, content="maximum context length is 512 tokens")
        return FakeReply(content="您好，建议外用药膏。")

    with FakeOpenAIServer(reply) as server:
        entry = {"name": "m", "model": "m", "base_url": server.base_url}
        config = tmp_path / "models.yaml"
        config.write_text(yaml.safe_dump({"models": [entry]}), encoding="utf-8")
        args = ["eval", "run", str(run_dir), "--model", "m", "--grader", "m"]
        result = CliRunner().invoke(app, [*args, "--models-config", str(config)])
    assert result.exit_code == 1, result.output
    assert "context_length" in result.output and "context" in result.output
    assert "Traceback" not in result.output
    json.dumps(result.output)  # printable as one summary, not a dump of rows


def _malformed_grader_run(tmp_path: Path, *flags: str) -> tuple[str, RunStore]:
    run_dir = tmp_path / "run"
    with RunStore(run_dir) as store:
        fill_store(store, demo_instances(1))

    def reply(body: dict[str, Any]) -> FakeReply:
        if body["model"] == "judge":
            return FakeReply(content="NOT-JSON 这不是评分结果")
        return FakeReply(content="您好，建议外用药膏。")

    with FakeOpenAIServer(reply) as server:
        models = [{"name": n, "model": n, "base_url": server.base_url} for n in ("m", "judge")]
        config = tmp_path / "models.yaml"
        config.write_text(yaml.safe_dump({"models": models}), encoding="utf-8")
        args = ["eval", "run", str(run_dir), "--model", "m", "--grader", "judge", "--limit", "1"]
        result = CliRunner().invoke(app, [*args, "--models-config", str(config), *flags])
    assert result.exit_code == 1, result.output
    return result.output, RunStore(run_dir)


def test_debug_calls_keeps_and_shows_the_raw_replies_that_failed_validation(
    tmp_path: Path,
) -> None:
    output, store = _malformed_grader_run(tmp_path, "--debug-calls")
    with store:
        kept = store.cache.rejected()
    assert kept and all(text == "NOT-JSON 这不是评分结果" for _, _, text in kept)
    assert "raw replies that failed validation" in output and "NOT-JSON" in output


def test_raw_replies_are_neither_kept_nor_shown_by_default(tmp_path: Path) -> None:
    output, store = _malformed_grader_run(tmp_path)
    with store:
        assert store.cache.rejected() == []
    assert "NOT-JSON" not in output
