"""A local OpenAI-compatible HTTP server for tests and benchmarks.

It speaks the real ``POST /v1/chat/completions`` protocol over loopback, so the official SDK
is exercised end to end: status codes, error bodies, usage, latency and a concurrency cap.
A ``stream: true`` request is answered with server-sent events, one chunk per character of the
reply (a character is a token here, as in its usage counts), paced by ``first_token_delay_s``
and ``token_delay_s``; ``streaming=False`` refuses stream requests with a 400, as servers
without streaming do.
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
    #: Promise the whole body, send this many bytes (of a stream: token chunks), hang up.
    cut_after: int | None = None
    refusal: str | None = None  # the message's ``refusal`` field (the model declined)
    #: False: a server that does not say what a call used (no usage, streamed or not)
    usage: bool = True
    #: Seconds to sit on the request before answering: a hung call, for timeout tests.
    hang_s: float = 0.0


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
        first_token_delay_s: float = 0.0,
        token_delay_s: float = 0.0,
        streaming: bool = True,
        max_concurrency: int | None = None,
        served_models: list[str] | None = None,
        model_info: dict[str, Any] | None = None,
    ) -> None:
        self.responder: Responder = responder or (lambda body: FakeReply(content="好的"))
        self.latency_s = latency_s
        #: A reply's first token comes this long after ``latency_s``, and each token is
        #: followed by ``token_delay_s`` more: a reply of n tokens takes first + n * token,
        #: streamed or whole (the same generation either way).
        self.first_token_delay_s = first_token_delay_s
        self.token_delay_s = token_delay_s
        self.streaming = streaming
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
                stream = bool(body.get("stream"))
                reply = outer._handle(body, stream)
                self._cut_after = reply.cut_after
                if stream and reply.status == 200 and reply.raw_body is None:
                    self._stream(body, reply)
                elif reply.raw_body is not None:
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
                    if not reply.usage:
                        payload.pop("usage", None)
                    self._send(200, payload, reply.headers)

            def _stream(self, body: dict[str, Any], reply: FakeReply) -> None:
                """Server-sent events, chunked; the slot ``_handle`` took is freed before the
                last chunk, so a client that sends its next call on [DONE] is never over."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    chunks = outer.stream_chunks(body, reply.content, reply.finish_reason,
                                                 refusal=reply.refusal)  # fmt: skip
                    self._event(chunks[0])  # the role: no token yet
                    time.sleep(outer.first_token_delay_s)
                    for sent, chunk in enumerate(chunks[1:-2]):
                        if sent == reply.cut_after:  # the connection drops mid-stream
                            self.close_connection = True
                            return
                        self._event(chunk)
                        time.sleep(outer.token_delay_s)
                finally:
                    outer._release()
                self._event(chunks[-2])  # finish_reason
                if reply.usage and (body.get("stream_options") or {}).get("include_usage"):
                    self._event(chunks[-1])
                self._chunk(b"data: [DONE]\n\n")
                self._chunk(b"")

            def _event(self, chunk: dict[str, Any]) -> None:
                data = json.dumps(chunk, ensure_ascii=False)
                self._chunk(f"data: {data}\n\n".encode())

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

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
    def _handle(self, body: dict[str, Any], stream: bool = False) -> FakeReply:
        """The reply to ``body``; for a stream it keeps its slot (``_release`` frees it)."""
        refused = stream and not self.streaming
        with self._lock:
            self.requests.append(body)
            over = self.max_concurrency is not None and self._active >= self.max_concurrency
            if not over and not refused:
                self._active += 1
                self.peak_concurrency = max(self.peak_concurrency, self._active)
            # A refused stream leaves the script for the plain request that follows it.
            scripted = self._scripted.popleft() if self._scripted and not over else None
            if refused and scripted is not None:
                self._scripted.appendleft(scripted)
        if over or refused:
            reply = (
                FakeReply(status=400, content="stream is not supported by this server")
                if refused
                else FakeReply(status=429, content="concurrency limit exceeded")
            )
            with self._lock:
                self.status_log.append(reply.status)
            return reply
        held = False
        try:
            if self.latency_s:
                time.sleep(self.latency_s)
            reply = scripted if scripted is not None else self.responder(body)
            if reply.hang_s:
                time.sleep(reply.hang_s)
            generated = reply.status == 200 and reply.raw_body is None
            held = stream and generated
            if generated and not stream:
                tokens = len(reply.content or "") + len(reply.refusal or "")
                pause = self.first_token_delay_s + tokens * self.token_delay_s
                if pause:
                    time.sleep(pause)
        finally:
            if not held:
                self._release()
        with self._lock:
            self.status_log.append(reply.status)
        return reply

    def _release(self) -> None:
        with self._lock:
            self._active -= 1

    @classmethod
    def stream_chunks(
        cls,
        body: dict[str, Any],
        content: str | None,
        finish_reason: str = "stop",
        *,
        refusal: str | None = None,
    ) -> list[dict[str, Any]]:
        """The ``chat.completion.chunk`` objects of a streamed ``completion_body``: the role,
        one per character of the refusal and the content, the finish_reason, the usage."""
        whole = cls.completion_body(body, content, finish_reason, refusal=refusal)
        base = {"id": whole["id"], "object": "chat.completion.chunk",
                "created": whole["created"], "model": whole["model"]}  # fmt: skip

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return {**base, "choices": [choice]}

        tokens = [chunk({"refusal": c}) for c in refusal or ""]
        tokens += [chunk({"content": c}) for c in content or ""]
        return [
            chunk({"role": "assistant", "content": ""}),
            *tokens,
            chunk({}, finish_reason),
            {**base, "choices": [], "usage": whole["usage"]},
        ]

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
