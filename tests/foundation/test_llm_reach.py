"""The reachability check: one GET /models before the first call, a clear error on failure."""

from __future__ import annotations

import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.llm import ModelSpec, reach
from medrealmm.llm.reach import EndpointUnreachable, check_endpoint
from medrealmm.testing import FakeOpenAIServer


@pytest.fixture(autouse=True)
def _fresh() -> None:
    reach._checked.clear()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_nothing_listening_is_refused_before_any_work(tmp_path: Path, demo_dir: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    config = tmp_path / "models.yaml"
    config.write_text(json.dumps({"models": [{"name": "m", "model": "m", "base_url": url}]}))
    run = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "mccp",
            "extract",
            str(demo_dir),
            str(run),
            "--model",
            "m",
            "--models-config",
            str(config),
        ],
    )
    assert result.exit_code == 2
    assert "cannot connect" in result.output and url in result.output
    assert "Traceback" not in result.output


def test_a_refused_key_is_named() -> None:
    class Refuse(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return

    server = HTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        spec = ModelSpec(name="m", model="m", base_url=url, api_key_env="MY_KEY")
        with pytest.raises(EndpointUnreachable, match=r"refused the API key.*MY_KEY"):
            check_endpoint(spec)
    finally:
        server.shutdown()


def test_a_server_without_a_models_route_passes() -> None:
    with FakeOpenAIServer() as server:  # answers 404 on GET /models
        check_endpoint(ModelSpec(name="m", model="m", base_url=server.base_url))


def test_a_model_id_the_server_does_not_list_is_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with FakeOpenAIServer(served_models=["qwen2.5-vl-7b"]) as server:
        spec = ModelSpec(name="mine", model="qwen-vl", base_url=server.base_url)
        with caplog.at_level(logging.WARNING, logger="medrealmm.reach"):
            check_endpoint(spec)
    assert "qwen2.5-vl-7b" in caplog.text and "qwen-vl" in caplog.text


def test_the_offline_baseline_is_never_checked() -> None:
    check_endpoint(ModelSpec(name="offline"))


def test_unreachable_is_a_value_error_for_the_cli() -> None:
    assert issubclass(EndpointUnreachable, ValueError)
