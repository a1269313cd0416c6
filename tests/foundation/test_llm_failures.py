"""Failure semantics of the OpenAI-compatible client: what is retried, what is recorded, why."""

from __future__ import annotations

import asyncio
import base64
import time

import pytest
from pydantic import BaseModel

from medrealmm.llm import ChatRequest, ImagePart, LLMError, Message, TextPart, complete_structured
from medrealmm.llm.failures import classify, reason_of, retry_after_s, summarise
from medrealmm.llm.openai_compat import OpenAICompatibleClient, default_max_tokens
from medrealmm.llm.transport import TRANSPORTS
from medrealmm.testing import FakeOpenAIServer, FakeReply


class Verdict(BaseModel):
    met: bool


#: Every test here runs over each transport: both must keep the same failure semantics.
_TRANSPORT: dict[str, str] = {"name": "openai-sdk"}


@pytest.fixture(autouse=True, params=TRANSPORTS)
def _each_transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_TRANSPORT, "name", request.param)


def _client(server: FakeOpenAIServer, **kwargs: object) -> OpenAICompatibleClient:
    defaults: dict[str, object] = {
        "base_url": server.base_url,
        "api_key": "k",
        "backoff_initial_s": 0.01,
        "backoff_max_s": 0.02,
    }
    defaults["transport"] = _TRANSPORT["name"]
    defaults.update(kwargs)
    return OpenAICompatibleClient("m", **defaults)  # type: ignore[arg-type]


def _request(task: str = "test.task") -> ChatRequest:
    return ChatRequest(task=task, messages=[Message.text("user", "问")])


@pytest.mark.parametrize(
    "body", [b'{"choices": [{"message": {"content": "x"', b"<html>502 Bad Gateway</html>"]
)
async def test_broken_200_bodies_are_retried_then_a_recorded_failure(body: bytes) -> None:
    with FakeOpenAIServer(lambda b: FakeReply(raw_body=body)) as server:
        result = await complete_structured(_client(server, max_attempts=2), _request(), Verdict)
    assert not result.ok and "[malformed_response]" in (result.error or "")
    assert len(server.requests) == 2 and not result.permanent


async def test_retry_after_is_honoured() -> None:
    with FakeOpenAIServer(lambda b: FakeReply(content="ok")) as server:
        server.script(FakeReply(status=429, headers={"Retry-After": "0.4"}))
        started = time.perf_counter()
        completion = await _client(server).complete(_request())
    assert completion.text == "ok" and time.perf_counter() - started >= 0.4


@pytest.mark.parametrize(
    ("status", "message", "reason"),
    [
        (400, "This model's maximum context length is 2048 tokens", "context_length"),
        (500, "Image input is not supported by this model", "unsupported"),
        (400, "bad field", "bad_request"),
        (401, "invalid key", "auth"),
    ],
)
async def test_permanent_errors_are_asked_once(status: int, message: str, reason: str) -> None:
    server = FakeOpenAIServer(lambda b: FakeReply(status=status, content=message))
    with server, pytest.raises(LLMError) as caught:
        await _client(server).complete(_request())
    assert caught.value.reason == reason and caught.value.permanent
    assert len(server.requests) == 1 and f"[{reason}]" in str(caught.value)


async def test_a_timed_out_call_is_sent_once_more_then_recorded() -> None:
    with FakeOpenAIServer(latency_s=0.6) as server, pytest.raises(LLMError) as caught:
        await _client(server, timeout_s=0.15).complete(_request())
    assert caught.value.reason == "timeout" and not caught.value.permanent
    assert len(server.requests) == 2 and caught.value.attempts == 2


async def test_a_connection_reset_mid_body_is_retried_then_counted() -> None:
    with FakeOpenAIServer(lambda b: FakeReply(content="好的")) as server:
        server.script(FakeReply(content="好的", cut_after=20))
        client = _client(server)
        completion = await client.complete(_request())
        assert completion.text == "好的" and client.attempts == 2
        server.script(*[FakeReply(cut_after=5)] * 2)
        with pytest.raises(LLMError) as caught:
            await _client(server, max_attempts=2).complete(_request())
    assert caught.value.reason == "connection" and not caught.value.permanent


async def test_cancelling_a_call_really_cancels_it() -> None:
    with FakeOpenAIServer(latency_s=2.0) as server:
        client = _client(server)
        task = asyncio.ensure_future(client.complete(_request()))
        while not server.requests:
            await asyncio.sleep(0.01)
        started = time.perf_counter()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.perf_counter() - started < 1.0  # not left waiting for the reply
        await client.aclose()
    assert len(server.requests) == 1 and client.attempts == 1  # and never sent again


async def test_usage_is_counted() -> None:
    with FakeOpenAIServer() as server:
        completion = await _client(server).complete(_request())
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0


@pytest.mark.parametrize("mode", ["json_schema", "json_object_schema", "json_object", "none"])
async def test_both_transports_send_the_same_structured_body(mode: str) -> None:
    bodies = []
    for transport in TRANSPORTS:
        with FakeOpenAIServer(lambda b: FakeReply(content='{"met": true}')) as server:
            client = _client(server, structured_mode=mode, transport=transport)
            assert (await complete_structured(client, _request(), Verdict)).ok
            await client.aclose()
        bodies.append(server.requests)
    assert bodies[0] == bodies[1]


async def test_truncated_reply_is_kept_and_flagged() -> None:
    with FakeOpenAIServer(lambda b: FakeReply(content="您好，建议", finish_reason="length")) as s:
        completion = await _client(s).complete(_request())
    assert completion.text == "您好，建议" and completion.truncated


async def test_null_content_is_an_empty_reply_not_an_error() -> None:
    with FakeOpenAIServer(lambda b: FakeReply(content=None)) as server:
        completion = await _client(server).complete(_request())
    assert completion.text == "" and not completion.truncated


async def test_auto_structured_mode_steps_down_once_and_says_so() -> None:
    def reply(body: dict) -> FakeReply:
        if body.get("response_format", {}).get("type") == "json_schema":
            return FakeReply(status=500, content="response_format json_schema not supported")
        return FakeReply(content='{"met": true}')

    with FakeOpenAIServer(reply) as server:
        client = _client(server)
        for _ in range(3):
            result = await complete_structured(client, _request(), Verdict)
            assert result.ok
    formats = [r["response_format"]["type"] for r in server.requests]
    assert formats == ["json_schema", "json_object", "json_object", "json_object"]
    assert "schema" in server.requests[1]["response_format"]
    assert client.active_structured_mode == "json_object_schema"


async def test_text_only_model_never_gets_image_parts() -> None:
    png = "data:image/png;base64," + base64.b64encode(b"\x89PNG").decode()
    request = ChatRequest(
        task="t",
        messages=[Message(role="user", content=[TextPart(text="看图"), ImagePart(url=png)])],
    )
    with FakeOpenAIServer() as server:
        await _client(server, vision=False).complete(request)
    content = server.requests[0]["messages"][0]["content"]
    assert isinstance(content, str) and "看图" in content and "base64" not in content


async def test_default_max_tokens_per_task_unless_set() -> None:
    with FakeOpenAIServer() as server:
        await _client(server).complete(_request("evaluate.grader"))
    assert server.requests[0]["max_tokens"] == default_max_tokens("evaluate.grader")


def test_failure_summary_groups_reasons_with_a_fix() -> None:
    errors = [
        "RuntimeError: criterion c1 not graded: call failed: [timeout] m: APITimeoutError",
        "call failed: [timeout] m: APITimeoutError",
        "[malformed_output] <root>: no JSON object found in the reply",
    ]
    groups = summarise(errors)
    assert [(g.reason, g.count) for g in groups] == [("timeout", 2), ("malformed_output", 1)]
    assert "--timeout" in groups[0].fix
    assert reason_of("plain message") == "error"


def test_retry_after_parses_seconds_and_ms() -> None:
    class Exc:
        def __init__(self, headers: dict[str, str]) -> None:
            self.response = type("R", (), {"headers": headers})()

    assert retry_after_s(Exc({"retry-after": "3"})) == 3.0
    assert retry_after_s(Exc({"retry-after-ms": "250"})) == 0.25
    assert retry_after_s(Exc({})) is None
    assert classify(ValueError()) == "error"


def test_command_line_max_tokens_and_timeout_override_the_yaml(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from medrealmm.llm.config import MAX_TOKENS_ENV, TIMEOUT_ENV, ModelSpec, with_overrides

    spec = ModelSpec(name="m", base_url="http://127.0.0.1:1/v1", params={"max_tokens": 50})
    assert with_overrides(spec) == spec
    monkeypatch.setenv(MAX_TOKENS_ENV, "256")
    monkeypatch.setenv(TIMEOUT_ENV, "7.5")
    changed = with_overrides(spec)
    assert changed.params.max_tokens == 256 and changed.timeout_s == 7.5
