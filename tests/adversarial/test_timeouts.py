"""A timed-out call is sent once more with a longer timeout, then recorded as a failure.

The fake server hangs on the first copy of a request; the client's retry (twice the timeout,
after the usual backoff) gets the answer. Over both transports, plain and streamed tasks.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable

import pytest

from medrealmm.llm import ChatRequest, LLMError, Message
from medrealmm.llm.openai_compat import OpenAICompatibleClient
from medrealmm.llm.transport import TRANSPORTS
from medrealmm.runner import run_units
from medrealmm.testing import FakeOpenAIServer, FakeReply

TASKS = ("test.task", "evaluate.respond")  # the second is streamed


def _client(server: FakeOpenAIServer, transport: str) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(
        "m",
        base_url=server.base_url,
        api_key="k",
        timeout_s=0.3,
        backoff_initial_s=0.01,
        backoff_max_s=0.02,
        transport=transport,  # type: ignore[arg-type]
    )


def _hangs_first(hang_s: float, count: int = 1) -> Callable[[dict], FakeReply]:
    """A responder that sits on its first ``count`` requests (a hung server), then answers."""
    seen = itertools.count()

    def respond(body: dict) -> FakeReply:
        if next(seen) < count:
            time.sleep(hang_s)
        return FakeReply(content="好的")

    return respond


def _request(task: str) -> ChatRequest:
    return ChatRequest(task=task, messages=[Message.text("user", "问")])


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("task", TASKS)
async def test_a_hung_call_is_retried_once_and_answered(transport: str, task: str) -> None:
    with FakeOpenAIServer(_hangs_first(0.8)) as server:
        client = _client(server, transport)
        completion = await client.complete(_request(task))
    assert completion.text == "好的"
    assert len(server.requests) == 2 and client.attempts == 2 and client.failed_calls == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_call_that_hangs_twice_is_a_recorded_timeout(transport: str) -> None:
    with FakeOpenAIServer(_hangs_first(0.8, count=2)) as server:
        client = _client(server, transport)
        with pytest.raises(LLMError) as caught:
            await client.complete(_request("test.task"))
    assert caught.value.reason == "timeout" and not caught.value.permanent
    assert caught.value.attempts == 2 and len(server.requests) == 2


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_run_with_some_hung_calls_finishes_every_unit(transport: str) -> None:
    """Twenty units, concurrent, a quarter of whose first requests hang: all are answered."""
    hung: set[str] = set()
    lock = threading.Lock()

    def respond(body: dict) -> FakeReply:
        text = str(body["messages"][-1]["content"])
        with lock:
            first = int(text.removeprefix("问")) % 4 == 0 and text not in hung
            hung.add(text)
        if first:
            time.sleep(0.8)
        return FakeReply(content="好的")

    answers: dict[str, str] = {}
    with FakeOpenAIServer(respond) as server:
        client = _client(server, transport)

        async def work(key: str) -> None:
            request = ChatRequest(task="test.task", messages=[Message.text("user", f"问{key}")])
            answers[key] = (await client.complete(request)).text

        stats = await run_units([str(n) for n in range(20)], work, description="t", concurrency=8)
    assert stats.failed == 0 and len(answers) == 20, stats.errors
    assert client.failed_calls == 0 and len(server.requests) == 25  # 5 hung, each sent twice
