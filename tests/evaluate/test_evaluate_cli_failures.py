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
