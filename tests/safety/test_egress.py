"""PHI stays home: a model is remote only where someone configured its base URL, and stages that
see un-masked data refuse a non-loopback host unless its config says ``phi: allowed``.

Every CLI test runs with all network egress recorded (``egress`` fixture) and fails on any
host nobody configured."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.llm import (
    ChatRequest,
    LLMError,
    Message,
    ModelSpec,
    OpenAICompatibleClient,
    PHIEgressError,
    UnknownModelError,
    build_client,
    guard_unmasked,
    resolve_spec,
)
from medrealmm.llm.config import proxy_url
from medrealmm.llm.reach import EndpointUnreachable, check_endpoint
from medrealmm.testing import FakeOpenAIServer, FakeReply

KEEP = json.dumps({"remove": False, "reason": "可保留"}, ensure_ascii=False)


@pytest.fixture(autouse=True)
def _no_endpoint_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _models_yaml(tmp_path: Path, **entry: object) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(json.dumps({"models": [{"max_attempts": 1, **entry}]}), encoding="utf-8")
    return path


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, result.output


def test_misspelled_privacy_model_is_an_error_not_the_public_endpoint(
    demo_corpus: Path, tmp_path: Path, egress: object
) -> None:
    code, output = _invoke(
        "corpus", "build", str(demo_corpus), str(tmp_path / "run"), "--privacy-model", "ofline"
    )
    assert code == 2
    assert "unknown model 'ofline'" in output and "known: offline" in output
    assert egress.hosts == []  # type: ignore[attr-defined]
    assert not (tmp_path / "run" / "store.sqlite").exists()  # refused before any work


def test_name_missing_from_models_config_lists_the_known_names(tmp_path: Path) -> None:
    config = _models_yaml(tmp_path, name="qwen", model="q", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(UnknownModelError, match=r"known: offline, qwen"):
        resolve_spec("gpt-4o", config)


@pytest.mark.parametrize(
    "args",
    [
        ("deid", "run", "{run}", "--model", "gpt-4o"),
        ("mccp", "extract", "{corpus}", "{run}", "--model", "gpt-4o", "--from", "raw"),
    ],
    ids=["deid", "mccp"],
)
def test_every_command_refuses_an_unconfigured_model(
    args: tuple[str, ...], demo_dir: Path, tmp_path: Path, egress: object
) -> None:
    run = tmp_path / "run"
    code, output = _invoke(
        *(a.format(run=run, corpus=demo_dir) for a in args),
    )
    assert code != 0
    assert "Traceback" not in output
    assert egress.remote() == []  # type: ignore[attr-defined]


def test_unmasked_stage_refuses_a_remote_host_without_phi_allowed(
    demo_corpus: Path, tmp_path: Path, egress: object
) -> None:
    config = _models_yaml(
        tmp_path, name="hosted", model="gpt-x", base_url="https://api.example.com/v1"
    )
    code, output = _invoke(
        "corpus", "build", str(demo_corpus), str(tmp_path / "run"),
        "--privacy-model", "hosted", "--models-config", str(config),
    )  # fmt: skip
    assert code == 2 and "api.example.com" in output and "phi: allowed" in output
    assert egress.hosts == []  # type: ignore[attr-defined]


def test_corpus_and_deid_talk_only_to_the_configured_loopback_host(
    demo_corpus: Path, tmp_path: Path, egress: object, caplog: pytest.LogCaptureFixture
) -> None:
    run = tmp_path / "run"
    with FakeOpenAIServer(lambda body: FakeReply(content=KEEP)) as server:
        config = _models_yaml(tmp_path, name="local", model="m", base_url=server.base_url)
        with caplog.at_level(logging.WARNING, logger="medrealmm.egress"):
            code, output = _invoke(
                "corpus", "build", str(demo_corpus), str(run),
                "--privacy-model", "local", "--models-config", str(config),
            )  # fmt: skip
        assert code == 0, output
        assert server.requests  # the screen did call the configured server
    assert set(egress.hosts) <= {"127.0.0.1", "localhost"}  # type: ignore[attr-defined]
    assert egress.hosts  # type: ignore[attr-defined]
    assert "corpus stage 4a privacy screen: sending un-masked patient data to 127.0.0.1" in (
        caplog.text
    )


def test_openai_base_url_serves_ad_hoc_model_ids(
    monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAIServer
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    spec = resolve_spec("Qwen/Qwen3-VL-8B")
    assert spec.base_url == fake_openai.base_url and spec.model == "Qwen/Qwen3-VL-8B"


def test_phi_allowed_is_the_only_way_to_a_remote_host_for_unmasked_data() -> None:
    remote = ModelSpec(name="h", model="m", base_url="https://api.example.com/v1")
    with pytest.raises(PHIEgressError, match="not loopback"):
        guard_unmasked(remote, "deid LLM pass")
    allowed = remote.model_copy(update={"phi": "allowed"})
    assert guard_unmasked(allowed, "deid LLM pass") == "api.example.com"
    for url in ("http://127.0.0.1:8000/v1", "http://localhost:1/v1", "http://[::1]:2/v1"):
        local = ModelSpec(name="l", model="m", base_url=url)
        assert guard_unmasked(local, "deid LLM pass") is not None
    assert guard_unmasked(resolve_spec("offline"), "deid LLM pass") is None


def test_no_client_without_an_explicit_base_url() -> None:
    with pytest.raises(UnknownModelError, match="no base_url"):
        build_client(ModelSpec(name="x", model="x"))
    with pytest.raises(ValueError, match="no base_url"):
        OpenAICompatibleClient("x")


def test_instances_cut_from_unmasked_data_keep_later_steps_at_home(
    demo_dir: Path, tmp_path: Path, egress: object
) -> None:
    """The egress rule follows the data: rubric and eval on instances extracted from raw refuse
    a remote host, though their own stages carry no 'un-masked' name."""
    config = _models_yaml(
        tmp_path, name="hosted", model="gpt-x", base_url="https://api.example.com/v1"
    )
    run = str(tmp_path / "run")
    extract = ("mccp", "extract", str(demo_dir), run, "--from", "raw", "--limit", "2")
    assert _invoke(*extract)[0] == 0
    code, output = _invoke(
        "rubric", "generate", run, "--model", "hosted", "--models-config", str(config)
    )
    assert code == 2 and "api.example.com" in output and "phi: allowed" in output
    assert "'raw'" in output
    assert _invoke("rubric", "generate", run)[0] == 0  # the offline baseline stays home
    code, output = _invoke(
        "eval", "run", run, "--out", str(tmp_path / "eval"),
        "--grader", "hosted", "--models-config", str(config),
    )  # fmt: skip
    assert code == 2 and "phi: allowed" in output, output
    assert egress.hosts == []  # type: ignore[attr-defined]


# -- proxies and redirects: PHI must not leave by a side door ------------------------------------

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")
TRANSPORTS = ("http", "openai-sdk")
IN_NAMESPACE = "MEDREALMM_TEST_NETNS"


class Listener:
    """A loopback TCP port that records every connection and byte it receives, then answers
    502 and hangs up: a stand-in for a proxy or a redirect target that must stay silent."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.received: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    self.received.append(conn.recv(65536))
                    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    self.received.append(b"")

    def close(self) -> None:
        self._server.close()


@pytest.fixture()
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


@pytest.fixture()
def proxy_env(monkeypatch: pytest.MonkeyPatch, listener: Listener) -> Listener:
    """Every proxy variable points at the recording listener; nothing is exempted."""
    for name in PROXY_VARIABLES:
        monkeypatch.setenv(name, listener.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    return listener


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_proxy_variables_never_carry_unmasked_data(
    transport: str, demo_corpus: Path, tmp_path: Path, proxy_env: Listener, egress: object
) -> None:
    """HTTP(S)_PROXY/ALL_PROXY set: the privacy screen's calls still go straight to the
    configured loopback server, and the proxy receives not one byte."""
    with FakeOpenAIServer(lambda body: FakeReply(content=KEEP), served_models=["m"]) as server:
        config = _models_yaml(
            tmp_path, name="local", model="m", base_url=server.base_url, transport=transport
        )
        code, output = _invoke(
            "corpus", "build", str(demo_corpus), str(tmp_path / "run"), "--limit", "3",
            "--privacy-model", "local", "--models-config", str(config),
        )  # fmt: skip
        assert code == 0, output
        assert server.requests  # the screen called the configured server directly
    assert proxy_env.received == []
    assert set(egress.hosts) <= {"127.0.0.1", "localhost"}  # type: ignore[attr-defined]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_redirect_is_a_failure_never_a_resend(
    transport: str, demo_corpus: Path, tmp_path: Path, listener: Listener, egress: object
) -> None:
    """The loopback server answers every chat call with 307 to another loopback port: the
    body is sent once, to the configured server only; each call is a recorded failure."""
    redirect = FakeReply(status=307, headers={"Location": f"{listener.url}/v1/chat/completions"})
    with FakeOpenAIServer(lambda body: redirect, served_models=["m"]) as server:
        spec = ModelSpec(
            name="local", model="m", base_url=server.base_url, transport=transport, max_attempts=3
        )

        async def call() -> None:
            client = build_client(spec)
            try:
                await client.complete(ChatRequest(task="t", messages=[Message.text("user", "x")]))
            finally:
                await client.aclose()

        with pytest.raises(LLMError) as caught:
            asyncio.run(call())
        assert caught.value.reason == "redirect" and caught.value.attempts == 1
        assert len(server.requests) == 1

        config = _models_yaml(
            tmp_path, name="local", model="m", base_url=server.base_url, transport=transport
        )
        _, output = _invoke(
            "corpus", "build", str(demo_corpus), str(tmp_path / "run"), "--limit", "3",
            "--privacy-model", "local", "--models-config", str(config),
        )  # fmt: skip
        assert "Traceback" not in output
        assert len(server.requests) == 1 + 3  # one call a case, none repeated
    assert listener.received == []
    assert set(egress.hosts) <= {"127.0.0.1", "localhost"}  # type: ignore[attr-defined]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_streamed_answer_obeys_the_proxy_and_redirect_rules(
    transport: str, proxy_env: Listener, egress: object
) -> None:
    """The evaluated model's answer streams (``stream: auto``): it goes straight to the
    configured loopback server whatever the proxy variables say, and a 307 to a stream request
    is a failure, the body never re-sent; a remote host stays refused for un-masked data."""
    request = ChatRequest(task="evaluate.respond", messages=[Message.text("user", "x")])

    async def call(spec: ModelSpec) -> float | None:
        client = build_client(spec)
        try:
            return (await client.complete(request)).first_token_s
        finally:
            await client.aclose()

    with FakeOpenAIServer(lambda body: FakeReply(content="好的")) as server:
        spec = ModelSpec(name="local", model="m", base_url=server.base_url, transport=transport)
        assert asyncio.run(call(spec)) is not None  # streamed
        assert server.requests[0]["stream"] is True
        redirect = FakeReply(status=307, headers={"Location": f"{proxy_env.url}/v1/chat"})
        server.script(redirect)
        with pytest.raises(LLMError) as caught:
            asyncio.run(call(spec))
        assert caught.value.reason == "redirect" and len(server.requests) == 2
    assert proxy_env.received == []
    assert set(egress.hosts) <= {"127.0.0.1", "localhost"}  # type: ignore[attr-defined]
    for stream in ("auto", True, False):
        remote = ModelSpec(
            name="h", model="m", base_url="https://api.example.com/v1", stream=stream
        )
        with pytest.raises(PHIEgressError, match="not loopback"):
            guard_unmasked(remote, "deid LLM pass")


def test_an_endpoint_that_redirects_is_refused_before_any_work(
    listener: Listener, tmp_path: Path
) -> None:
    class Redirecting(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(308)
            self.send_header("Location", f"{listener.url}/v1/models")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        with pytest.raises(EndpointUnreachable, match="redirect"):
            check_endpoint(ModelSpec(name="r", model="r", base_url=base_url))
    finally:
        server.shutdown()
        server.server_close()
    assert listener.received == []


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_proxy_the_config_names_is_used(
    transport: str, listener: Listener, fake_openai: FakeOpenAIServer
) -> None:
    spec = ModelSpec(
        name="p", model="m", base_url=fake_openai.base_url, transport=transport, max_attempts=1,
        proxy=listener.url,
    )  # fmt: skip

    async def call() -> None:
        client = build_client(spec)
        try:
            await client.complete(ChatRequest(task="t", messages=[Message.text("user", "x")]))
        finally:
            await client.aclose()

    with pytest.raises(LLMError):
        asyncio.run(call())  # the listener is no real proxy: it answers 502
    assert fake_openai.requests == []
    assert listener.received and listener.received[0].startswith(b"POST http://127.0.0.1:")


def test_proxy_env_is_read_only_when_the_config_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp.example:3128")
    monkeypatch.setenv("NO_PROXY", "internal.example")
    hosted = ModelSpec(name="h", model="m", base_url="https://api.example.com/v1")
    assert proxy_url(hosted) is None
    assert proxy_url(hosted.model_copy(update={"proxy": "env"})) == (
        "http://proxy.corp.example:3128"
    )
    exempt = hosted.model_copy(update={"proxy": "env", "base_url": "https://internal.example/v1"})
    assert proxy_url(exempt) is None
    # A proxy is a host PHI passes through: a remote one needs 'phi: allowed' as well.
    local = ModelSpec(name="l", model="m", base_url="http://127.0.0.1:8000/v1", proxy="env")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.corp.example:3128")
    with pytest.raises(PHIEgressError, match=r"through the proxy 'proxy\.corp\.example'"):
        guard_unmasked(local, "deid LLM pass")
    allowed = local.model_copy(update={"phi": "allowed"})
    assert guard_unmasked(allowed, "deid LLM pass") == "127.0.0.1"


def _unshare_usable() -> str | None:
    """Why the namespace run cannot happen here, or None when it can."""
    if sys.platform != "linux" or shutil.which("unshare") is None:
        return "needs Linux with unshare(1)"
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"unshare -rn is not permitted here: {probe.stderr.decode(errors='replace')[:200]}"
    return None


_LOOPBACK_UP = (
    "import fcntl, socket, struct, sys, pytest\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "flags = struct.unpack('16sH', fcntl.ioctl(s, 0x8913, struct.pack('16sH', b'lo', 0))[:18])[1]\n"
    "fcntl.ioctl(s, 0x8914, struct.pack('16sH', b'lo', flags | 1))\n"
    "sys.exit(pytest.main(sys.argv[1:]))\n"
)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get(IN_NAMESPACE) == "1", reason="already in the namespace")
def test_proxy_and_redirect_vectors_in_a_network_namespace(tmp_path: Path) -> None:
    """The same tests in a network namespace with only loopback: a byte meant for any other
    host has nowhere to go, whatever the monkeypatched socket functions miss (C libraries)."""
    why = _unshare_usable()
    if why is not None:
        pytest.skip(why)
    env = {**os.environ, IN_NAMESPACE: "1"}
    result = subprocess.run(
        [
            "unshare", "-rn", sys.executable, "-c", _LOOPBACK_UP, __file__, "-q", "-x",
            "-p", "no:cacheprovider", "-k", "proxy or redirect", f"--basetemp={tmp_path}/t",
        ],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout
