"""The agents against the real OpenAI-compatible client and a loopback fake server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from medrealmm.llm import OfflineClient
from medrealmm.mccp import (
    INTENT_TASK,
    STAGE_TASK,
    AgentFailure,
    builtin_taxonomy,
    cropper_request,
    labeler_request,
    verifier_request,
)
from medrealmm.mccp.candidates import history_up_to
from medrealmm.schema import Consultation, Sender
from medrealmm.testing import FakeOpenAIServer, FakeReply

GOOD = {"label": True, "score": 0.8, "reason": "需要看图"}


async def test_cropper_sees_the_whole_dialogue_and_the_reply_it_judges(
    skin_case: Consultation, wire: Any
) -> None:
    with FakeOpenAIServer(lambda body: wire.reply(GOOD)) as server:
        judgement = await wire.agents(wire.fake_client(server)).crop(skin_case, 2)
    assert (judgement.label, judgement.score, judgement.reason) == (True, 0.8, "需要看图")
    [body] = server.requests
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert "实质性的临床参与" in system and "寒暄" in system
    assert "后面的秘密回答" in user  # φ_A(t, C) sees the whole trajectory
    assert "第3条消息（患者）之后" in user
    assert "第4条消息：\n从图片看是湿疹样改变" in user
    assert body["response_format"]["type"] == "json_schema"


async def test_verifier_prompt_holds_nothing_after_t(skin_case: Consultation, wire: Any) -> None:
    with FakeOpenAIServer(lambda body: wire.reply(GOOD)) as server:
        judgement = await wire.agents(wire.fake_client(server)).verify(skin_case, 2)
    assert judgement.label
    [body] = server.requests
    text = wire.body_text(body)
    assert "照片发您看看" in text and "[图片1（患者上传）：图片内容未提供]" in text
    for later in skin_case.events[3:]:
        assert later.content not in text
    assert "后面的秘密" not in text and "从图片看" not in text


def test_verifier_inputs_hold_nothing_after_t(skin_case: Consultation) -> None:
    request = verifier_request(skin_case.department, history_up_to(skin_case.events, 2))
    assert request.inputs["events"] == skin_case.events[:3]
    assert request.inputs["t"] == 2
    everything = repr(request.inputs) + "".join(m.plain_text for m in request.messages)
    assert "后面的秘密" not in everything


async def test_verifier_sends_only_the_images_uploaded_up_to_t(
    tmp_path: Path, consultation: Any, wire: Any
) -> None:
    for name in ("a.png", "b.png"):
        (tmp_path / "images").mkdir(exist_ok=True)
        Image.new("RGB", (8, 8), "red").save(tmp_path / "images" / name)
    P, D = Sender.PATIENT, Sender.PHYSICIAN
    case = consultation(
        [
            (P, "看看这张", ["images/a.png"]),
            (D, "从图片看有红斑，考虑湿疹。"),
            (P, "新拍的", ["images/b.png"]),
            (D, "好转了，继续用药。"),
        ]
    )
    with FakeOpenAIServer(lambda body: wire.reply(GOOD)) as server:
        agents = wire.agents(wire.fake_client(server), image_root=tmp_path, verifier_images=True)
        await agents.verify(case, 0)
        await agents.verify(case, 2)

    def image_count(body: dict[str, Any]) -> int:
        parts = body["messages"][-1]["content"]
        return sum(1 for part in parts if part["type"] == "image_url")

    assert [image_count(body) for body in server.requests] == [1, 2]
    parts = server.requests[1]["messages"][-1]["content"]
    last = max(i for i, part in enumerate(parts) if part["type"] == "image_url")
    marker, image = parts[last - 1], parts[last]
    assert marker["text"].endswith("[3] 患者：新拍的\n[图片2（患者上传）]")  # inline, after it
    assert image["image_url"]["url"].startswith("data:image/png;base64,")


async def test_malformed_reply_is_shown_back_and_repaired(
    skin_case: Consultation, wire: Any
) -> None:
    with FakeOpenAIServer(lambda body: wire.reply(GOOD)) as server:
        server.script(FakeReply(content="我觉得可以"), wire.reply({"label": True, "score": 3}))
        judgement = await wire.agents(wire.fake_client(server)).crop(skin_case, 2)
    assert judgement.score == 0.8
    assert len(server.requests) == 3
    second, third = server.requests[1]["messages"], server.requests[2]["messages"]
    assert second[-2] == {"role": "assistant", "content": "我觉得可以"}
    assert "无法通过校验" in second[-1]["content"]
    assert "score" in third[-1]["content"]  # the range error names the field


async def test_persistent_bad_output_is_an_agent_failure(
    skin_case: Consultation, wire: Any
) -> None:
    server = FakeOpenAIServer(lambda body: FakeReply(content="无法判断"))
    with server, pytest.raises(AgentFailure, match=r"mccp\.verifier"):
        await wire.agents(wire.fake_client(server)).verify(skin_case, 2)
    assert len(server.requests) == 3


async def test_labeler_stays_inside_the_closed_taxonomy(skin_case: Consultation, wire: Any) -> None:
    with FakeOpenAIServer() as server:
        server.script(wire.reply({"label": "咨询"}), wire.reply({"label": "follow_up"}))
        agents = wire.agents(wire.fake_client(server))
        label = await agents.label(INTENT_TASK, "皮肤科", history_up_to(skin_case.events, 2))
    assert label == "follow_up"
    first = server.requests[0]
    for intent in builtin_taxonomy("intent").ids:
        assert intent in first["messages"][0]["content"]
    schema = first["response_format"]["json_schema"]["schema"]
    assert set(schema["properties"]["label"]["enum"]) == set(builtin_taxonomy("intent").ids)
    assert "从图片看" not in wire.body_text(first)  # x only: the target reply is hidden


def test_requests_render_from_template_files(skin_case: Consultation) -> None:
    cropper = cropper_request(skin_case, 0)
    assert cropper.task == "mccp.cropper" and cropper.inputs["t"] == 0
    stage = labeler_request(STAGE_TASK, builtin_taxonomy("stage"), "皮肤科", skin_case.events[:3])
    assert "问诊阶段" in stage.messages[0].plain_text
    assert "history_taking（病史采集）" in stage.messages[0].plain_text


async def test_offline_baseline_answers_every_agent(skin_case: Consultation, wire: Any) -> None:
    agents = wire.agents(OfflineClient())
    engaged = await agents.crop(skin_case, 2)
    assert engaged.label and engaged.score > 0
    assert not (await agents.verify(skin_case, 0)).label  # no image yet
    assert (await agents.verify(skin_case, 2)).score == 1.0  # image in e_t itself
    stage = await agents.label(STAGE_TASK, "皮肤科", history_up_to(skin_case.events, 2))
    assert stage == "examination_review"
