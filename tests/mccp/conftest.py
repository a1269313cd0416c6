from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from medrealmm.llm import LLMClient, OpenAICompatibleClient
from medrealmm.mccp import MccpAgents, builtin_taxonomy
from medrealmm.schema import Consultation, Event, ImageOrigin, ImageRef, Sender
from medrealmm.testing import FakeOpenAIServer, FakeReply

P, D = Sender.PATIENT, Sender.PHYSICIAN

ConsultationFactory = Callable[..., Consultation]


def make_consultation(
    turns: list[tuple[Sender, str] | tuple[Sender, str, list[str]]], cid: str = "c1"
) -> Consultation:
    """Events from (sender, text[, image paths]) tuples; images are patient medical photos."""
    start = datetime(2025, 6, 1, 9, 0)
    events = []
    for i, turn in enumerate(turns):
        sender, text = turn[0], turn[1]
        paths = turn[2] if len(turn) > 2 else []  # type: ignore[misc]
        images = [ImageRef(path=p, origin=ImageOrigin.PATIENT, category="skin") for p in paths]
        events.append(
            Event(
                sender=sender, timestamp=start + timedelta(minutes=i), content=text, images=images
            )
        )
    return Consultation(id=cid, department="皮肤科", events=events)


@pytest.fixture()
def consultation() -> ConsultationFactory:
    """``consultation([(Sender.PATIENT, "text", ["images/x.jpg"]), ...], cid="c1")``."""
    return make_consultation


@pytest.fixture()
def skin_case() -> Consultation:
    """A small consultation whose later turns carry marker text for leakage checks."""
    return make_consultation(
        [
            (P, "医生您好，手背起红疹很痒一周了。"),
            (D, "请问有没有接触洗洁精？以前有过湿疹吗？"),
            (P, "照片发您看看。", ["images/c1/01.jpg"]),
            (D, "从图片看是湿疹样改变，考虑手部湿疹，建议外用糠酸莫米松乳膏每日一次。"),
            (P, "后面的秘密问题：激素药膏有副作用吗？"),
            (D, "后面的秘密回答：短期规范使用副作用很小。"),
        ]
    )


class Wire:
    """Helpers for tests that talk to the fake OpenAI-compatible server."""

    @staticmethod
    def fake_client(server: FakeOpenAIServer, **kwargs: object) -> OpenAICompatibleClient:
        """The real OpenAI-compatible client pointed at the loopback fake, without slow backoff."""
        settings: dict[str, object] = {
            "base_url": server.base_url,
            "api_key": "test-key",
            "max_attempts": 1,
            "backoff_initial_s": 0.01,
            "backoff_max_s": 0.01,
        }
        settings.update(kwargs)
        return OpenAICompatibleClient("fake-model", **settings)  # type: ignore[arg-type]

    @staticmethod
    def body_text(body: dict[str, Any]) -> str:
        """Every text the request sent, system and user, as one string."""
        texts = []
        for message in body["messages"]:
            content = message["content"]
            if isinstance(content, str):
                texts.append(content)
            else:
                texts.extend(part["text"] for part in content if part["type"] == "text")
        return "\n".join(texts)

    @staticmethod
    def agent_of(body: dict[str, Any]) -> str:
        """Which agent sent a request, read from its system prompt."""
        system = body["messages"][0]["content"]
        if "实质性的临床参与" in system:
            return "cropper"
        if "多模态临床挑战点" in system:
            return "verifier"
        return "intent" if "患者意图" in system else "stage"

    @staticmethod
    def reply(payload: dict[str, Any]) -> FakeReply:
        return FakeReply(content=json.dumps(payload, ensure_ascii=False))

    @staticmethod
    def agents(client: LLMClient, **kwargs: Any) -> MccpAgents:
        return MccpAgents(
            client=client,
            intent_taxonomy=builtin_taxonomy("intent"),
            stage_taxonomy=builtin_taxonomy("stage"),
            **kwargs,
        )


@pytest.fixture()
def wire() -> type[Wire]:
    return Wire
