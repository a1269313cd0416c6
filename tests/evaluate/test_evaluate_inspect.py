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
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        (log,) = inspect_ai.eval(
            medrealmm(release=str(release)),
            model="openai/fake-vlm",
            model_args={"streaming": False, "responses_api": False},
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
    # the same prompt: inspect sent the texts and images medrealmm sends (inspect's
    # OpenAI provider names the system role "developer")
    from_inspect = sorted(said(body) for body in server.requests[:4])
    assert from_inspect == sorted(said(body) for body in server.requests[4:])
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
