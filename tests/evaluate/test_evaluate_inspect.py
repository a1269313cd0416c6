"""The inspect_ai task gives the same Score as `medrealmm eval` on the same replies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate import load_results
from medrealmm.store import RunStore
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import REPLY, accept

inspect_ai = pytest.importorskip("inspect_ai")


def test_inspect_task_scores_equal_medrealmm_eval(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from medrealmm.evaluate.inspect_task import medrealmm

    accept(release)
    with FakeOpenAIServer(lambda body: FakeReply(content=REPLY)) as server:
        # the README's form for any OpenAI-compatible server: chat completions, role "system"
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        monkeypatch.setenv("LOCAL_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        (log,) = inspect_ai.eval(
            medrealmm(release=str(release)),
            model="openai-api/local/fake-vlm",
            display="none",
            log_dir=str(tmp_path / "inspect-logs"),
        )
        served_to_inspect = len(server.requests)
        args = ["eval", "run", str(release), "--out", str(tmp_path / "results")]
        result = CliRunner().invoke(app, [*args, "--model", "fake-vlm"])
        assert result.exit_code == 0, result.output
    assert log.status == "success", log.error
    assert served_to_inspect == 4  # one generation per instance; the grader is offline
    with RunStore(tmp_path / "results") as store:
        results = load_results(store)
    ours = {r.instance_id: r.score for r in results.records if r.model == "fake-vlm"}
    theirs = {str(s.id): s.scores["rubric_score"].value for s in log.samples or []}
    assert theirs == pytest.approx(ours)
    (row,) = [r for r in results.summary() if r.model == "fake-vlm"]
    metric = log.results.scores[0].metrics["mean"].value  # type: ignore[union-attr]
    assert metric == pytest.approx(row.score)
    # the same prompt: inspect sent the texts and images medrealmm sends, in the same roles
    assert [m["role"] for m in server.requests[0]["messages"]][:1] == ["system"]
    from_inspect = sorted(said(body) for body in server.requests[:4])
    ours = [body for body in server.requests[4:] if "CANARY" not in str(body["messages"])]
    assert from_inspect == sorted(said(body) for body in ours)  # the canary check aside
    assert all(images for _, images in from_inspect)  # images went inline


def said(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    texts, images = [], []
    for message in body["messages"]:
        content = message["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for part in parts:
            if part["type"] == "text":
                texts.append(part["text"])
            else:
                images.append(part["image_url"]["url"])
    return texts, images


@pytest.mark.real_server
@pytest.mark.slow
def test_the_readme_inspect_command_runs_against_a_real_chat_completions_server(
    release: Path, tmp_path: Path
) -> None:
    """`inspect eval medrealmm/medrealmm ... --model openai-api/local/MODEL` as the README
    writes it, against llama-cpp-python's server, which serves chat completions only and
    knows no "developer" role."""
    import json
    import os
    import subprocess
    import sys

    from medrealmm.testing.llama_server import MODEL_ALIAS, LlamaServer, missing_reason

    if missing_reason() is not None:
        pytest.skip(str(missing_reason()))
    accept(release)
    logs = tmp_path / "inspect-logs"
    with LlamaServer(log=tmp_path / "server.log") as server:
        env = {
            **os.environ,
            "LOCAL_BASE_URL": server.base_url,
            "LOCAL_API_KEY": "local",
            "INSPECT_LOG_DIR": str(logs),
            "INSPECT_LOG_FORMAT": "json",
        }
        command = [
            *(sys.executable, "-m", "inspect_ai", "eval", "medrealmm/medrealmm"),
            *("-T", f"release={release}", "-T", "images=false"),
            *("--model", f"openai-api/local/{MODEL_ALIAS}", "--limit", "2"),
            *("--max-tokens", "48", "--display", "none"),
        ]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (log_file,) = logs.glob("*.json")
    log = json.loads(log_file.read_text(encoding="utf-8"))
    assert log["status"] == "success"
    samples = log["samples"]
    assert len(samples) == 2 and all(not s.get("error") for s in samples)
    assert all("rubric_score" in s["scores"] for s in samples)
