"""The OpenAI-compatible client against a real HTTP server speaking the wire protocol."""

from __future__ import annotations

import asyncio
import base64
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from medrealmm.llm import (
    ChatRequest,
    GenerationParams,
    ImagePart,
    LLMError,
    Message,
    OpenAICompatibleClient,
    TextPart,
    complete_structured,
)
from medrealmm.llm.transport import TRANSPORTS
from medrealmm.testing import FakeOpenAIServer, FakeReply


class Judgement(BaseModel):
    label: bool
    score: float


GOOD = '{"label": true, "score": 0.9}'


#: Every test here runs over each transport: both must keep the same failure semantics.
_TRANSPORT: dict[str, str] = {"name": "openai-sdk"}


@pytest.fixture(autouse=True, params=TRANSPORTS)
def _each_transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_TRANSPORT, "name", request.param)


def _client(server: FakeOpenAIServer, **kwargs: object) -> OpenAICompatibleClient:
    defaults: dict[str, object] = {
        "base_url": server.base_url,
        "api_key": "test-key",
        "backoff_initial_s": 0.01,
        "backoff_max_s": 0.02,
    }
    defaults["transport"] = _TRANSPORT["name"]
    defaults.update(kwargs)
    return OpenAICompatibleClient("fake-model", **defaults)  # type: ignore[arg-type]


def _request(text: str = "请判断") -> ChatRequest:
    return ChatRequest(task="test.judge", messages=[Message.text("user", text)])


async def test_plain_completion_round_trip_with_usage() -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content="您好")) as server:
        completion = await _client(server).complete(_request())
    assert completion.text == "您好"
    assert completion.model == "fake-model"
    assert completion.usage.completion_tokens == 2
    body = server.requests[0]
    assert body["model"] == "fake-model"
    assert body["messages"] == [{"role": "user", "content": "请判断"}]
    assert body["temperature"] == 0.0


async def test_multimodal_messages_use_image_url_parts(tmp_path: Path) -> None:
    png = base64.b64encode(b"\x89PNG fake").decode()
    request = ChatRequest(
        task="t",
        messages=[
            Message(
                role="user",
                content=[TextPart(text="看图"), ImagePart(url=f"data:image/png;base64,{png}")],
            )
        ],
    )
    with FakeOpenAIServer() as server:
        await _client(server).complete(request)
    content = server.requests[0]["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": "看图"}
    assert content[1]["type"] == "image_url"
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_transient_errors_are_retried(status: int) -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content="ok")) as server:
        server.script(FakeReply(status=status), FakeReply(status=status))
        completion = await _client(server).complete(_request())
    assert completion.text == "ok"
    assert server.status_log == [status, status, 200]


async def test_retries_exhaust_into_llm_error_not_a_hang() -> None:
    server = FakeOpenAIServer(lambda body: FakeReply(status=500))
    with server, pytest.raises(LLMError, match="HTTP 500"):
        await _client(server, max_attempts=3).complete(_request())
    assert len(server.requests) == 3


async def test_client_errors_are_not_retried() -> None:
    server = FakeOpenAIServer(lambda body: FakeReply(status=400, content="bad request"))
    with server, pytest.raises(LLMError):
        await _client(server).complete(_request())
    assert len(server.requests) == 1


async def test_structured_output_sends_json_schema_and_parses() -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content=f"```json\n{GOOD}\n```")) as server:
        result = await complete_structured(_client(server), _request(), Judgement)
    assert result.ok and result.value == Judgement(label=True, score=0.9)
    fmt = server.requests[0]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["properties"]["label"]["type"] == "boolean"


async def test_malformed_output_is_repaired_by_retry_with_the_error_shown() -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content=GOOD)) as server:
        server.script(FakeReply(content="I think yes"), FakeReply(content='{"label": "maybe"}'))
        result = await complete_structured(_client(server), _request(), Judgement, attempts=3)
    assert result.ok and result.attempts == 3
    repair = server.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": "I think yes"}
    assert "无法通过校验" in repair[-1]["content"]


async def test_still_malformed_after_retries_is_a_recorded_failure() -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content="not json at all")) as server:
        result = await complete_structured(_client(server), _request(), Judgement, attempts=2)
    assert not result.ok and result.value is None
    assert result.attempts == 2 and "JSON" in (result.error or "")
    assert len(server.requests) == 2


async def test_transport_failure_is_a_recorded_failure() -> None:
    with FakeOpenAIServer(lambda body: FakeReply(status=503)) as server:
        result = await complete_structured(_client(server, max_attempts=2), _request(), Judgement)
    assert not result.ok and "call failed" in (result.error or "")


async def test_broken_response_body_is_retried_as_malformed() -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content=GOOD)) as server:
        server.script(FakeReply(content='{"label": tru'))
        result = await complete_structured(_client(server), _request(), Judgement)
    assert result.ok and result.attempts == 2


async def test_concurrency_limit_is_respected() -> None:
    with FakeOpenAIServer(latency_s=0.05) as server:
        client = _client(server, concurrency=3)
        await asyncio.gather(*(client.complete(_request(f"q{i}")) for i in range(12)))
    assert server.peak_concurrency <= 3
    assert server.completed_calls == 12


async def test_requests_per_minute_limit_spaces_starts() -> None:
    with FakeOpenAIServer() as server:
        client = _client(server, rpm=600)  # one start every 0.1 s
        started = time.perf_counter()
        await asyncio.gather(*(client.complete(_request(f"q{i}")) for i in range(4)))
        elapsed = time.perf_counter() - started
    assert elapsed >= 0.29


async def test_params_override_client_defaults() -> None:
    with FakeOpenAIServer() as server:
        client = _client(server, params=GenerationParams(temperature=0.7, top_p=0.95))
        request = _request().model_copy(update={"params": GenerationParams(max_tokens=50)})
        await client.complete(request)
    body = server.requests[0]
    assert body["temperature"] == 0.7  # the model's configured setting stays
    assert body["top_p"] == 0.95 and body["max_tokens"] == 50  # the request adds its own


async def test_image_bodies_on_the_wire_are_the_plain_json_encoding(tmp_path: Path) -> None:
    """Spliced image bytes (``medrealmm.llm.wire``) change nothing the server receives: the
    body is byte for byte ``json.dumps(payload, ensure_ascii=False)``, on either transport."""
    import json
    import os

    from medrealmm.llm.openai_compat import to_openai_messages

    images = [
        ImagePart(url="data:image/jpeg;base64," + base64.b64encode(os.urandom(3000)).decode())
        for _ in range(3)
    ]
    text = 'é"\\\n\u0000image\u0000 看图'  # escapes, a NUL and the stand-in's own text
    content = [TextPart(text=text), images[0], TextPart(text="图2"), images[1], images[2]]
    request = ChatRequest(
        task="t",
        messages=[Message.text("system", "评分"), Message(role="user", content=content)],
    )
    with FakeOpenAIServer() as server:
        client = _client(server)
        await client.complete(request)
        await client.complete(request)  # the second call splices the cached bytes
        await client.aclose()
    payload = client._payload(request, client.active_structured_mode)
    assert payload["messages"] == to_openai_messages(request.messages)
    old = json.dumps(payload, ensure_ascii=False).encode()
    if _TRANSPORT["name"] == "http":
        assert server.raw_bodies == [old, old]
    assert [json.loads(b) for b in server.raw_bodies] == [json.loads(old)] * 2
