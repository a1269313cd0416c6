"""Streaming the evaluated model's answer: time to first token against a loopback server with
known delays, the same reply as a plain call, and a fallback that says why (never silently)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from medrealmm.io.errors import DataError
from medrealmm.llm import ChatRequest, LLMError, Message, OpenAICompatibleClient
from medrealmm.llm.config import load_model_specs
from medrealmm.llm.openai_compat import STREAM_OFF_NOTE
from medrealmm.llm.stream import ChunkAssembler, SSEDecoder, StreamError
from medrealmm.llm.transport import TRANSPORTS
from medrealmm.testing import FakeOpenAIServer, FakeReply

REPLY = "您好，建议您尽快到皮肤科面诊。"  # 16 characters: 16 tokens on the fake server
FIRST_S = 0.3
TOKEN_S = 0.02
#: Loopback and scheduling overhead allowed above the server's own delays (a loaded host).
SLACK_S = 1.5


def _client(server: FakeOpenAIServer, transport: str, **kwargs: object) -> OpenAICompatibleClient:
    settings: dict[str, object] = {"base_url": server.base_url, "transport": transport}
    settings.update(backoff_initial_s=0.01, backoff_max_s=0.02, **kwargs)
    return OpenAICompatibleClient("fake-vlm", **settings)  # type: ignore[arg-type]


def _answer(task: str = "evaluate.respond") -> ChatRequest:
    return ChatRequest(task=task, messages=[Message.text("user", "手上起了红疹怎么办？")])


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_time_to_first_token_and_total_follow_the_servers_delays(transport: str) -> None:
    server = FakeOpenAIServer(
        lambda body: FakeReply(content=REPLY), first_token_delay_s=FIRST_S, token_delay_s=TOKEN_S
    )
    with server:
        client = _client(server, transport)
        completion = await client.complete(_answer())
        await client.aclose()
    first, total = completion.first_token_s, completion.latency_s
    assert first is not None and completion.first_token_note is None
    assert FIRST_S <= first < FIRST_S + SLACK_S
    assert total >= first + len(REPLY) * TOKEN_S
    assert total < FIRST_S + len(REPLY) * TOKEN_S + SLACK_S
    sent = server.requests[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_streamed_reply_equals_the_plain_one(transport: str) -> None:
    """Content, usage (from the final chunk), finish reason and refusal are the plain call's."""
    replies = [
        FakeReply(content=REPLY),
        FakeReply(content=REPLY[:5], finish_reason="length"),
        FakeReply(content=None, refusal="无法回答"),
    ]
    for reply in replies:
        with FakeOpenAIServer(lambda body, reply=reply: reply) as server:
            streamed = _client(server, transport)
            plain = _client(server, transport, stream=False)
            a = await streamed.complete(_answer())
            b = await plain.complete(_answer())
            await streamed.aclose()
            await plain.aclose()
        assert a.first_token_s is not None and b.first_token_s is None
        same = ("text", "model", "usage", "finish_reason", "refusal")
        assert a.model_dump(include=set(same)) == b.model_dump(include=set(same))
        assert [r.get("stream") for r in server.requests] == [True, None]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_only_the_evaluated_answer_streams(transport: str) -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content="好")) as server:
        client = _client(server, transport)
        for task in ("evaluate.grader", "rubric.generator", "mccp.select"):
            completion = await client.complete(_answer(task))
            assert completion.first_token_s is None and completion.first_token_note is None
        await client.aclose()
    assert all("stream" not in body for body in server.requests)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_auto_falls_back_once_for_a_server_that_refuses_and_says_why(
    transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content=REPLY), streaming=False) as server:
        client = _client(server, transport)
        first = await client.complete(_answer())
        second = await client.complete(_answer())
        await client.aclose()
    assert first.text == second.text == REPLY
    for completion in (first, second):
        assert completion.first_token_s is None
        assert "refused a stream request (HTTP 400)" in (completion.first_token_note or "")
    # one refused stream request, then plain ones: the endpoint is settled, not re-probed
    assert [body.get("stream") for body in server.requests] == [True, None, None]
    assert server.status_log == [400, 200, 200]
    assert "stream request refused" in caplog.text


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_server_that_ignores_stream_answers_whole_and_is_noted(transport: str) -> None:
    whole = FakeOpenAIServer.completion_body({"model": "fake-vlm"}, REPLY)
    raw = FakeReply(raw_body=json.dumps(whole).encode())
    with FakeOpenAIServer(lambda body: FakeReply(content=REPLY)) as server:
        server.script(raw)
        client = _client(server, transport)
        first = await client.complete(_answer())
        second = await client.complete(_answer())
        await client.aclose()
    assert first.text == REPLY and first.first_token_s is None
    assert "one whole body" in (first.first_token_note or "")
    assert second.first_token_note == first.first_token_note
    assert [body.get("stream") for body in server.requests] == [True, None]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_stream_true_makes_a_refusal_the_calls_failure(transport: str) -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content=REPLY), streaming=False) as server:
        client = _client(server, transport, stream=True)
        with pytest.raises(LLMError) as caught:
            await client.complete(_answer())
        await client.aclose()
    assert caught.value.status == 400 and caught.value.permanent
    assert len(server.requests) == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_stream_false_never_streams_and_says_so(transport: str) -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content=REPLY)) as server:
        client = _client(server, transport, stream=False)
        completion = await client.complete(_answer())
        await client.aclose()
    assert completion.first_token_s is None and completion.first_token_note == STREAM_OFF_NOTE
    assert "stream" not in server.requests[0]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_request_rejected_either_way_is_not_a_streaming_refusal(transport: str) -> None:
    """A 400 for the request itself comes back for the plain re-send too: streaming stays on,
    and a context-length 400 is not re-sent at all."""
    with FakeOpenAIServer(lambda body: FakeReply(content=REPLY)) as server:
        bad = FakeReply(status=400, content="messages[0] is malformed")
        server.script(bad, bad, FakeReply(status=400, content="maximum context length exceeded"))
        client = _client(server, transport)
        with pytest.raises(LLMError) as bad_request:
            await client.complete(_answer())
        assert client.stream_note is None
        with pytest.raises(LLMError) as too_long:
            await client.complete(_answer())
        assert client.stream_note is None
        streamed = await client.complete(_answer())
        await client.aclose()
    assert bad_request.value.reason == "bad_request" and too_long.value.reason == "context_length"
    assert [body.get("stream") for body in server.requests] == [True, None, True, True]
    assert streamed.first_token_s is not None


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_stream_cut_mid_reply_is_retried_whole(transport: str) -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content=REPLY)) as server:
        server.script(FakeReply(content=REPLY, cut_after=3))
        client = _client(server, transport)
        completion = await client.complete(_answer())
        await client.aclose()
    assert completion.text == REPLY and completion.attempts == 2
    assert completion.first_token_s is not None
    assert [body.get("stream") for body in server.requests] == [True, True]


def test_the_assembler_counts_tokens_without_usage_and_skips_role_chunks() -> None:
    started = time.perf_counter()
    assembler = ChunkAssembler(started)
    assembler.add({"model": "m", "choices": [{"index": 0, "delta": {"role": "assistant"}}]})
    assert assembler.first_token_s is None  # the role is not a token
    for piece in ("你", "好", ""):
        assembler.add({"choices": [{"index": 0, "delta": {"content": piece}}]})
    assembler.add({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    data, first, note, streamed = assembler.result("fallback-id")
    assert first is not None and note is None and streamed
    assert isinstance(data, dict)
    assert data["choices"][0]["message"]["content"] == "你好"
    # output counted; the prompt's tokens unknown (None), never a made-up 0
    assert data["usage"] == {"prompt_tokens": None, "completion_tokens": 2}
    assert data["model"] == "m"


def test_a_cut_stream_or_an_error_event_is_a_failure() -> None:
    assembler = ChunkAssembler(time.perf_counter())
    assembler.add({"choices": [{"index": 0, "delta": {"content": "半"}}]})
    with pytest.raises(ValueError, match="finish_reason"):
        assembler.result("m")  # cut before the finish: a malformed body, retried
    with pytest.raises(StreamError, match="overloaded"):
        assembler.add({"error": {"message": "overloaded"}})


def test_sse_lines_make_events() -> None:
    decoder = SSEDecoder()
    lines = [b": keep-alive\n", b'data: {"a":\r\n', b"data: 1}\n", b"\n", b"event: x\n"]
    events = [decoder.line(line) for line in lines]
    assert events == [None, None, None, '{"a":\n1}', None]
    assert decoder.flush() is None


@pytest.mark.parametrize("value, expected", [("auto", "auto"), (True, True), (False, False)])
def test_the_models_yaml_stream_setting(tmp_path: Path, value: object, expected: object) -> None:
    path = tmp_path / "models.yaml"
    entry = {"name": "m", "base_url": "http://127.0.0.1:1/v1", "stream": value}
    path.write_text(yaml.safe_dump({"models": [entry]}), encoding="utf-8")
    assert load_model_specs(path)["m"].stream == expected
    assert load_model_specs(path)["m"].model_copy(update={"stream": "auto"}).stream == "auto"


def test_a_bad_stream_setting_names_the_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "models.yaml"
    path.write_text("models:\n  - name: m\n    stream: sometimes\n", encoding="utf-8")
    with pytest.raises(DataError, match="stream"):
        load_model_specs(path)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("stream", [True, False])
async def test_a_server_that_does_not_say_records_unknown_prompt_tokens(
    transport: str, stream: bool, tmp_path: Path
) -> None:
    """No usage from the server: the prompt's tokens are None in the completion and the
    store counts the call as unknown, never as 0 tokens."""
    from medrealmm.store import RunStore

    with FakeOpenAIServer(lambda body: FakeReply(content=REPLY, usage=False)) as server:
        client = _client(server, transport, stream=stream)
        try:
            completion = await client.complete(_answer())
        finally:
            await client.aclose()
    assert completion.usage.prompt_tokens is None
    with RunStore(tmp_path / "run") as store:
        store.record_calls("eval.response", "fake-vlm", [completion])
        (row,) = store.usage()
    assert (row["calls"], row["unknown_prompt_calls"], row["prompt_tokens"]) == (1, 1, 0)
