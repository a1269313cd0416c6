"""Issue item 4 as a user meets it: instances cut from raw (un-masked) consultations, proxy
variables pointing at a recording port, and a loopback grader that answers every call with a
307 to another recording port. Neither port receives a byte; every call is sent once and
recorded as a ``redirect`` failure (the case incomplete, never a 0). The transport-level cases
and the network-namespace run are in ``tests/safety/test_egress.py``."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.schema import CaseScore
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply


class Recorder:
    """A loopback port that keeps whatever arrives and hangs up."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.received: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    self.received.append(conn.recv(65536))
                except OSError:
                    self.received.append(b"")


@pytest.fixture()
def recorders() -> Iterator[tuple[Recorder, Recorder]]:
    pair = Recorder(), Recorder()
    yield pair
    for recorder in pair:
        recorder.sock.close()


@pytest.mark.parametrize("transport", ["http", "openai-sdk"])
def test_unmasked_grading_leaves_by_no_proxy_and_no_redirect(
    transport: str,
    demo_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    recorders: tuple[Recorder, Recorder],
) -> None:
    proxy, target = recorders
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, proxy.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    runner = CliRunner()
    run = str(tmp_path / "run")
    extract = ["mccp", "extract", str(demo_dir), run, "--from", "raw", "--limit", "1"]
    assert runner.invoke(app, extract).exit_code == 0
    assert runner.invoke(app, ["rubric", "generate", run]).exit_code == 0

    moved = FakeReply(status=307, headers={"Location": f"{target.url}/v1/chat/completions"})
    with FakeOpenAIServer(lambda body: moved, served_models=["judge"]) as server:
        config = tmp_path / "models.yaml"
        entry = {"name": "judge", "model": "judge", "base_url": server.base_url}
        config.write_text(json.dumps({"models": [{**entry, "transport": transport}]}))
        args = ["eval", "run", run, "--model", "offline", "--grader", "judge"]
        result = runner.invoke(app, [*args, "--models-config", str(config)])
        sent = len(server.requests)
    assert result.exit_code == 1, result.output  # failures recorded: rerun to retry
    assert "redirect" in result.output and "Traceback" not in result.output
    assert proxy.received == [] and target.received == []
    with RunStore(run) as store:
        scores = [s for s in store.iter(stages.EVAL_SCORE, CaseScore) if s.model != "online"]
        llm_criteria = sum(len(s.failed_criteria) for s in scores)
    assert scores and all(not s.complete and s.score is None for s in scores)
    assert sent == llm_criteria  # each call sent once, to the configured server only
