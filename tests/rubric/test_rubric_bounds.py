"""The Generator's bounds: integer weights in [-20, 20] minus {0}; 3-19 criteria is asked
for and warned about, never refused."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from medrealmm.llm import OpenAICompatibleClient
from medrealmm.rubric import MAX_CRITERIA, MIN_CRITERIA, RubricSettings, generate_rubric
from medrealmm.rubric.baseline import baseline_criteria
from medrealmm.rubric.drafts import (
    GENERATOR_MAX,
    GENERATOR_MIN,
    MAX_CRITERION_CHARS,
    GeneratorOutput,
)
from medrealmm.schema import CriterionKind, Instance
from medrealmm.testing import FakeOpenAIServer, FakeReply


def _reply(weights: list[object]) -> str:
    return json.dumps(
        {"criteria": [{"text": f"第{i}条临床要求", "weight": w} for i, w in enumerate(weights)]},
        ensure_ascii=False,
    )


def _client(server: FakeOpenAIServer) -> OpenAICompatibleClient:
    return OpenAICompatibleClient("judge", base_url=server.base_url, max_attempts=1)


@pytest.mark.parametrize(
    "weights",
    [
        [8, 0, -5],  # zero weight
        [8, 21, -5],  # above 20
        [8, -21],  # below -20
        [8, 4.5],  # not an integer
        [-8, -4, -2],  # no positive criterion: the score would divide by zero
        [],  # nothing to grade
    ],
)
def test_generator_output_rejects_out_of_bounds(weights: list[object]) -> None:
    with pytest.raises(ValidationError):
        GeneratorOutput.model_validate_json(_reply(weights))


@pytest.mark.parametrize("count", [1, GENERATOR_MAX + 1, 25])
async def test_rubric_size_outside_3_to_19_is_kept_with_a_warning(
    tinea_instance: Instance, count: int
) -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content=_reply([5] * count))) as server:
        result = await generate_rubric(_client(server), tinea_instance, RubricSettings())
    assert result.rubric is not None and result.attempts == 1
    assert len(result.rubric.criteria) == count + 1  # plus the length rule
    assert result.rubric.size_warning and f"{count + 1} 条" in result.rubric.size_warning


def test_generator_share_leaves_room_for_the_length_rule() -> None:
    assert (GENERATOR_MIN + 1, GENERATOR_MAX + 1) == (MIN_CRITERIA, MAX_CRITERIA) == (3, 19)
    assert len(GeneratorOutput.model_validate_json(_reply([20, -20])).criteria) == 2


async def test_out_of_bounds_reply_is_retried_with_the_error_shown(
    tinea_instance: Instance,
) -> None:
    with FakeOpenAIServer() as server:
        server.script(
            FakeReply(content=_reply([8, 25, -3])),
            FakeReply(content=_reply([8, 5, -3])),
        )
        result = await generate_rubric(_client(server), tinea_instance, RubricSettings())
    assert result.rubric is not None and result.attempts == 2
    retry = server.requests[1]["messages"]
    assert retry[-2]["content"] == _reply([8, 25, -3])
    assert "weight" in retry[-1]["content"] and "20" in retry[-1]["content"]
    weights = [c.weight for c in result.rubric.criteria]
    assert weights[:3] == [8, 5, -3]
    rule = result.rubric.criteria[-1]
    assert rule.kind is CriterionKind.RULE and rule.id == "c04"


async def test_persistent_violation_is_a_recorded_failure_not_a_crash(
    tinea_instance: Instance,
) -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content=_reply([0, 0]))) as server:
        result = await generate_rubric(_client(server), tinea_instance, RubricSettings())
    assert result.rubric is None
    assert result.attempts == 3 and len(server.requests) == 3
    assert result.error and "weight" in result.error


async def test_generator_prompt_carries_context_and_reference(tinea_instance: Instance) -> None:
    labelled = tinea_instance.model_copy(
        update={"intent": "medication_guidance", "stage": "my_custom_stage"}
    )
    with FakeOpenAIServer(lambda body: FakeReply(content=_reply([8, -4]))) as server:
        await generate_rubric(_client(server), labelled, RubricSettings())
    messages = server.requests[0]["messages"]
    system, user = messages[0]["content"], messages[1]["content"]
    assert "-20" in system and "20" in system and "不是标准答案" in system
    assert tinea_instance.target_reply in user
    assert "我脚趾缝又痒又脱皮" in user and "皮肤科" in user
    assert "患者意图：用药指导" in user and "问诊阶段：my_custom_stage" in user
    assert server.requests[0]["response_format"]["type"] == "json_schema"


async def test_over_long_criterion_is_a_failed_unit_with_its_reason_never_cut(
    tinea_instance: Instance,
) -> None:
    too_long = "建议外用抗真菌药并说明疗程" * 20  # 260 characters
    reply = json.dumps({"criteria": [{"text": too_long, "weight": 8}]}, ensure_ascii=False)
    with FakeOpenAIServer(lambda body: FakeReply(content=reply)) as server:
        result = await generate_rubric(_client(server), tinea_instance, RubricSettings())
    assert result.rubric is None
    assert result.error and str(MAX_CRITERION_CHARS) in result.error and "260" in result.error


def test_offline_baseline_criteria_carry_the_whole_clause() -> None:
    reply = "考虑足癣（浸渍糜烂型）可能性大，建议外用联苯苄唑乳膏每日一次连续使用四周。"
    texts = [d.text for d in baseline_criteria(reply, image_count=0)]
    assert not any("…" in text for text in texts)
    assert any("足癣（浸渍糜烂型）可能性大" in text for text in texts)
    assert any("外用联苯苄唑乳膏每日一次连续使用四周" in text for text in texts)
