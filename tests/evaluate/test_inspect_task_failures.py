"""The inspect task fails like a task: every sample errored is a failed run (the log's status
is ``error``; ``inspect eval`` itself exits 0 whatever the status, ``inspect eval-set`` 1), and
a model that takes no image is told, in one line, to pass -T images=false."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import REPLY, accept

inspect_ai = pytest.importorskip("inspect_ai")
SRC = str(Path(__file__).resolve().parents[2] / "src")


def has_image(body: dict[str, Any]) -> bool:
    return any(
        isinstance(m["content"], list) and any(p["type"] == "image_url" for p in m["content"])
        for m in body["messages"]
    )


def text_only(body: dict[str, Any]) -> FakeReply:
    """A text-only server: an image part is a 400, as vLLM answers for a language model."""
    if has_image(body):
        return FakeReply(status=400, content="this model does not accept image input")
    return FakeReply(content=REPLY)


def inspect_eval(release: Path, server: FakeOpenAIServer, tmp_path: Path, *task_args: str):
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        "HOME": str(tmp_path / "home"),
        "LOCAL_BASE_URL": server.base_url,
        "LOCAL_API_KEY": "test",
        "INSPECT_LOG_DIR": str(tmp_path / "logs"),
        "MEDREALMM_PROBE": "on",
    }
    command = [
        *(sys.executable, "-m", "inspect_ai", "eval", "medrealmm/medrealmm"),
        *("-T", f"release={release}", *task_args),
        *("--model", "openai-api/local/fake-llm", "--display", "plain"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    (log_file,) = sorted((tmp_path / "logs").glob("*.eval"))[-1:]
    return done, inspect_ai.log.read_eval_log(str(log_file))


@pytest.mark.slow
def test_every_sample_errored_is_a_failed_run(release: Path, tmp_path: Path) -> None:
    accept(release)
    with FakeOpenAIServer(lambda body: FakeReply(content="")) as server:  # empty replies
        done, log = inspect_eval(release, server, tmp_path, "-T", "images=false")
    assert log.status == "error"
    assert log.samples and all(s.error is not None for s in log.samples)
    assert "empty reply" in str(log.error) or "empty reply" in done.stdout + done.stderr


@pytest.mark.slow
def test_a_text_only_model_is_told_to_pass_images_false(release: Path, tmp_path: Path) -> None:
    accept(release)
    with FakeOpenAIServer(text_only) as server:
        _, failed = inspect_eval(release, server, tmp_path)
        probes = sum(has_image(body) for body in server.requests)
        (tmp_path / "logs").rename(tmp_path / "logs-images")
        done, log = inspect_eval(release, server, tmp_path, "-T", "images=false")
    assert failed.status == "error" and probes == 1  # probed once, not once per case
    messages = {s.error.message for s in failed.samples or [] if s.error is not None}
    assert len(messages) == 1 and "-T images=false" in messages.pop()
    assert done.returncode == 0 and log.status == "success"
    assert all("rubric_score" in s.scores for s in log.samples or [])
