"""A local OpenAI-compatible HTTP server for tests and benchmarks.

It speaks the real ``POST /v1/chat/completions`` protocol over loopback, so the official SDK
is exercised end to end: status codes, error bodies, usage, latency and a concurrency cap.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeReply:
    status: int = 200
    content: str | None = ""  # None: a null message content (some servers' refusals)
    finish_reason: str = "stop"
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: bytes | None = None  # send exactly these bytes (for broken-body tests)
    cut_after: int | None = None  # promise the whole body, send this many bytes, hang up
    refusal: str | None = None  # the message's ``refusal`` field (the model declined)


Responder = Callable[[dict[str, Any]], FakeReply]


class _QuietServer(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: a client opening 64 connections at once
    # would see most of them dropped and retried a second later, which measures the server.
    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client went away mid-reply (a killed or cancelled run): expected
        super().handle_error(request, client_address)


_ERROR_TYPES = {
    429: "rate_limit_error",
    500: "server_error",
    503: "server_error",
    400: "invalid_request_error",
}


class FakeOpenAIServer:
    """``with FakeOpenAIServer(responder) as server: client(base_url=server.base_url)``."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency_s: float = 0.0,
        max_concurrency: int | None = None,
        served_models: list[str] | None = None,
        model_info: dict[str, Any] | None = None,
    ) -> None:
        self.responder: Responder = responder or (lambda body: FakeReply(content="好的"))
        self.latency_s = latency_s
        self.max_concurrency = max_concurrency
        #: Ids listed by GET /models; None answers 404, as servers without the route do.
        self.served_models = served_models
        #: Extra fields of every listed model, e.g. ``{"max_model_len": 32768}`` (vLLM).
        self.model_info = model_info or {}
        self.requests: list[dict[str, Any]] = []
        #: The bytes of each POST body as received, for tests of what goes on the wire.
        self.raw_bodies: list[bytes] = []
        self.status_log: list[int] = []
        self.peak_concurrency = 0
        self._scripted: deque[FakeReply] = deque()
        self._active = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------
    def script(self, *replies: FakeReply) -> None:
        """Serve these replies first, in order, then fall back to the responder."""
        with self._lock:
            self._scripted.extend(replies)

    @property
    def completed_calls(self) -> int:
        return sum(1 for status in self.status_log if status == 200)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go as two writes: no 40 ms stall
            _cut_after: int | None = None

            def log_message(self, *args: object) -> None:  # keep test output clean
                return

            def do_GET(self) -> None:
                if not self.path.rstrip("/").endswith("/models") or outer.served_models is None:
                    self._send(404, {"error": {"message": "not found", "type": "not_found"}})
                    return
                data = [
                    {"id": m, "object": "model", **outer.model_info} for m in outer.served_models
                ]
                self._send(200, {"object": "list", "data": data})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                with outer._lock:
                    outer.raw_bodies.append(raw)
                body = json.loads(raw or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found", "type": "not_found"}})
                    return
                reply = outer._handle(body)
                self._cut_after = reply.cut_after
                if reply.raw_body is not None:
                    self._send_bytes(reply.status, reply.raw_body, reply.headers)
                elif reply.status != 200:
                    error = {
                        "message": reply.content or f"fake error {reply.status}",
                        "type": _ERROR_TYPES.get(reply.status, "api_error"),
                        "code": None,
                    }
                    self._send(reply.status, {"error": error}, reply.headers)
                else:
                    payload = outer.completion_body(
                        body, reply.content, reply.finish_reason, refusal=reply.refusal
                    )
                    self._send(200, payload, reply.headers)

            def _send(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                self._send_bytes(
                    status, json.dumps(payload, ensure_ascii=False).encode(), headers or {}
                )

            def _send_bytes(self, status: int, data: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if self._cut_after is not None:  # a connection reset mid-body
                    self.wfile.write(data[: self._cut_after])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data)

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- behaviour -------------------------------------------------------------------
    def _handle(self, body: dict[str, Any]) -> FakeReply:
        with self._lock:
            self.requests.append(body)
            over = self.max_concurrency is not None and self._active >= self.max_concurrency
            if not over:
                self._active += 1
                self.peak_concurrency = max(self.peak_concurrency, self._active)
            scripted = self._scripted.popleft() if self._scripted and not over else None
        if over:
            reply = FakeReply(status=429, content="concurrency limit exceeded")
            with self._lock:
                self.status_log.append(reply.status)
            return reply
        try:
            if self.latency_s:
                time.sleep(self.latency_s)
            reply = scripted if scripted is not None else self.responder(body)
        finally:
            with self._lock:
                self._active -= 1
        with self._lock:
            self.status_log.append(reply.status)
        return reply

    @staticmethod
    def completion_body(
        body: dict[str, Any],
        content: str | None,
        finish_reason: str = "stop",
        *,
        refusal: str | None = None,
    ) -> dict[str, Any]:
        """The chat-completion JSON answering request ``body`` with ``content`` (usage counts
        roughly from the request's length), for other fake servers to reuse."""
        prompt_chars = len(json.dumps(body.get("messages", []), ensure_ascii=False))
        return {
            "id": f"chatcmpl-fake-{time.monotonic_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": content,
                        **({"refusal": refusal} if refusal is not None else {}),
                    },
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_chars // 2,
                "completion_tokens": len(content or ""),
                "total_tokens": prompt_chars // 2 + len(content or ""),
            },
        }
