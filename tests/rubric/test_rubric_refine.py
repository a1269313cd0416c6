"""Feedback items and the Refiner, including the appendix 6.5 split (8 -> 5 + 3)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from medrealmm.llm import OfflineClient, OpenAICompatibleClient
from medrealmm.rubric import (
    FeedbackError,
    FeedbackItem,
    FeedbackType,
    RoundFeedback,
    RubricSettings,
    SplitPart,
    check_feedback,
    diff_rubrics,
    refine_rubric,
)
from medrealmm.rubric.rules import length_criterion
from medrealmm.schema import Criterion, CriterionKind, Instance, Rubric
from medrealmm.testing import FakeOpenAIServer, FakeReply

BUNDLED = "疗程足够（外用抗真菌药至少4周，症状消失后巩固1-2周），并给出日常足部护理建议"
DURATION = "外用抗真菌药疗程足够：至少4周，症状消失后再巩固1-2周"
DAILY_CARE = "给出日常足部护理建议：保持干燥、勤换袜子、不共用拖鞋"


def tinea_round0(instance_id: str = "tinea@4") -> Rubric:
    return Rubric(
        instance_id=instance_id,
        round=0,
        criteria=[
            Criterion(id="c01", text="判断为足癣并说明依据", weight=8),
            Criterion(id="c02", text=BUNDLED, weight=8),
            Criterion(id="c03", text="编造患者未提供的检查结果", weight=-8),
            length_criterion("c04", 200, -5),
        ],
    )


def split_feedback(instance_id: str = "tinea@4") -> RoundFeedback:
    return RoundFeedback(
        instance_id=instance_id,
        round=0,
        reviewer="dr_wang",
        items=[
            FeedbackItem(
                type=FeedbackType.SPLIT_CRITERION,
                criterion_id="c02",
                parts=[SplitPart(text=DURATION, weight=5), SplitPart(text=DAILY_CARE, weight=3)],
                comment="两件不相关的要求捆在一条里",
            )
        ],
    )


@pytest.mark.parametrize(
    "item",
    [
        {"type": "wrong_weight", "weight": 5},  # no criterion id
        {"type": "wrong_weight", "criterion_id": "c01"},  # no weight
        {"type": "wrong_weight", "criterion_id": "c01", "weight": 0},
        {"type": "missing_criterion", "text": "建议真菌镜检"},  # no weight
        {"type": "unsafe_omission", "criterion_id": "c01", "text": "x", "weight": 3},
        {"type": "split_criterion", "criterion_id": "c02", "parts": [{"text": "a", "weight": 8}]},
        {"type": "remove_criterion", "criterion_id": "c02", "parts": [{"text": "a", "weight": 1}]},
        {"type": "approve"},
    ],
)
def test_feedback_items_need_the_fields_of_their_type(item: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        FeedbackItem.model_validate(item)


def test_feedback_must_fit_the_round_it_is_about() -> None:
    rubric = tinea_round0()
    bad = [
        FeedbackItem(type=FeedbackType.REMOVE_CRITERION, criterion_id="c99"),
        FeedbackItem(
            type=FeedbackType.SPLIT_CRITERION,
            criterion_id="c04",
            parts=[SplitPart(text="a", weight=2), SplitPart(text="b", weight=-2)],
        ),
        FeedbackItem(type=FeedbackType.REFERENCE_SPECIFIC, criterion_id="c04", text="字数"),
    ]
    for item in bad:
        feedback = RoundFeedback(instance_id="tinea@4", round=0, reviewer="r", items=[item])
        with pytest.raises(FeedbackError) as info:
            check_feedback(rubric, feedback)
        assert info.value.index == 0
    conflicting = RoundFeedback(
        instance_id="tinea@4",
        round=0,
        reviewer="r",
        items=[
            FeedbackItem(type=FeedbackType.REMOVE_CRITERION, criterion_id="c01"),
            FeedbackItem(type=FeedbackType.WRONG_WEIGHT, criterion_id="c01", weight=3),
        ],
    )
    with pytest.raises(FeedbackError, match=r"items\[1\]"):
        check_feedback(rubric, conflicting)
    with pytest.raises(FeedbackError, match="round"):
        check_feedback(rubric, RoundFeedback(instance_id="tinea@4", round=1, reviewer="r"))


async def test_appendix_split_example_8_becomes_5_plus_3(tinea_instance: Instance) -> None:
    before = tinea_round0(tinea_instance.id)
    result = await refine_rubric(
        OfflineClient(), tinea_instance, before, split_feedback(), RubricSettings()
    )
    after = result.rubric
    assert after is not None and after.round == 1
    by_id = {c.id: c for c in after.criteria}
    assert "c02" not in by_id
    assert (by_id["c02.1"].text, by_id["c02.1"].weight) == (DURATION, 5)
    assert (by_id["c02.2"].text, by_id["c02.2"].weight) == (DAILY_CARE, 3)
    assert [c.id for c in after.criteria] == ["c01", "c02.1", "c02.2", "c03", "c04"]
    assert after.positive_total == before.positive_total  # 8 points, now earned separately
    diff = diff_rubrics(before, after)
    assert [c.id for c in diff.removed] == ["c02"]
    assert [c.id for c in diff.added] == ["c02.1", "c02.2"]
    assert not diff.changed


async def test_offline_refiner_applies_every_feedback_type(tinea_instance: Instance) -> None:
    before = tinea_round0(tinea_instance.id)
    before.criteria[0] = Criterion(
        id="c01", text="给出与病情相符的初步判断：足癣（浸渍糜烂型）可能性大", weight=8
    )
    feedback = RoundFeedback(
        instance_id=tinea_instance.id,
        round=0,
        reviewer="dr_li",
        items=[
            FeedbackItem(type=FeedbackType.REFERENCE_SPECIFIC, criterion_id="c01"),
            FeedbackItem(type=FeedbackType.WRONG_WEIGHT, criterion_id="c03", weight=-12),
            FeedbackItem(type=FeedbackType.REMOVE_CRITERION, criterion_id="c02"),
            FeedbackItem(type=FeedbackType.MISSING_CRITERION, text="询问是否合并糖尿病", weight=4),
            FeedbackItem(
                type=FeedbackType.UNSAFE_OMISSION, text="建议自行口服抗真菌药而不就医", weight=-9
            ),
            FeedbackItem(type=FeedbackType.WRONG_WEIGHT, criterion_id="c04", weight=3),
        ],
    )
    result = await refine_rubric(
        OfflineClient(), tinea_instance, before, feedback, RubricSettings(), used_ids={"c05"}
    )
    after = result.rubric
    assert after is not None
    by_id = {c.id: c for c in after.criteria}
    assert by_id["c01"].text == "给出与病情相符的初步判断"
    assert by_id["c03"].weight == -12 and "c02" not in by_id
    # new criteria never reuse an id an earlier round used (c05 here)
    assert (by_id["c06"].text, by_id["c06"].weight) == ("询问是否合并糖尿病", 4)
    assert by_id["c07"].weight == -9
    rule = by_id["c04"]  # a rule criterion flipped to positive: code rewrites its text
    assert rule.kind is CriterionKind.RULE and rule.weight == 3 and "以内" in rule.text


def _refiner_reply(criteria: list[dict[str, object]]) -> FakeReply:
    return FakeReply(content=json.dumps({"criteria": criteria}, ensure_ascii=False))


async def test_refiner_reply_that_ignores_feedback_is_retried(tinea_instance: Instance) -> None:
    before = tinea_round0(tinea_instance.id)
    kept = [
        {"id": "c01", "text": "判断为足癣并说明依据", "weight": 8},
        {"id": "c03", "text": "编造患者未提供的检查结果", "weight": -8},
        {"id": "c04", "text": "模型改写的字数要求", "weight": -5},
    ]
    ignored = [*kept, {"id": "c02", "text": BUNDLED, "weight": 8}]
    followed = [
        *kept,
        {"id": "c02", "text": "疗程足够", "weight": 5},
        {"id": "c02", "text": "日常护理", "weight": 3},
    ]
    with FakeOpenAIServer() as server:
        server.script(_refiner_reply(ignored), _refiner_reply(followed))
        client = OpenAICompatibleClient("m", base_url=server.base_url, max_attempts=1)
        result = await refine_rubric(
            client, tinea_instance, before, split_feedback(), RubricSettings()
        )
    assert result.rubric is not None and result.attempts == 2
    assert "c02 must be split" in server.requests[1]["messages"][-1]["content"]
    assert sorted(c.weight for c in result.rubric.criteria if c.id.startswith("c02")) == [3, 5]
    # the rule criterion keeps its code-written text whatever the model wrote
    assert result.rubric.criteria[2].text == before.criteria[3].text
    for body in server.requests:  # the Refiner never sees y_orig
        text = json.dumps(body["messages"], ensure_ascii=False)
        assert tinea_instance.target_reply not in text
        assert "联苯苄唑" not in text
    user = server.requests[0]["messages"][1]["content"]
    assert "split_criterion" in user and DURATION in user and "两件不相关" in user


async def test_refiner_that_drops_a_criterion_fails_as_data(tinea_instance: Instance) -> None:
    before = tinea_round0(tinea_instance.id)
    dropped = [
        {"id": "c01", "text": "判断为足癣", "weight": 8},
        {"id": "c02", "text": "疗程足够", "weight": 5},
        {"id": "c02", "text": "日常护理", "weight": 3},
    ]
    with FakeOpenAIServer(lambda body: _refiner_reply(dropped)) as server:
        client = OpenAICompatibleClient("m", base_url=server.base_url, max_attempts=1)
        result = await refine_rubric(
            client, tinea_instance, before, split_feedback(), RubricSettings()
        )
    assert result.rubric is None and "c03 must appear exactly once" in (result.error or "")


async def test_refiner_sends_the_shared_schema(tinea_instance: Instance) -> None:
    from medrealmm.llm.structured import schema_for
    from medrealmm.rubric.drafts import RefinerOutput

    reply = [
        {"id": "c01", "text": "判断为足癣并说明依据", "weight": 8},
        {"id": "c02", "text": "疗程足够的要求", "weight": 5},
        {"id": "c02", "text": "日常护理的建议", "weight": 3},
        {"id": "c03", "text": "编造患者未提供的检查结果", "weight": -8},
        {"id": "c04", "text": "字数规则", "weight": -5},
    ]
    with FakeOpenAIServer(lambda body: _refiner_reply(reply)) as server:
        client = OpenAICompatibleClient("m", base_url=server.base_url, max_attempts=1)
        result = await refine_rubric(
            client, tinea_instance, tinea_round0(), split_feedback(), RubricSettings()
        )
    assert result.rubric is not None
    sent = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert sent == schema_for(RefinerOutput)


async def test_removing_criteria_below_three_is_a_warning_not_a_failure(
    tinea_instance: Instance,
) -> None:
    feedback = RoundFeedback(
        instance_id="tinea@4",
        round=0,
        reviewer="dr_wang",
        items=[
            FeedbackItem(type=FeedbackType.REMOVE_CRITERION, criterion_id=cid)
            for cid in ("c02", "c03")
        ],
    )
    result = await refine_rubric(
        OfflineClient(), tinea_instance, tinea_round0(), feedback, RubricSettings()
    )
    assert result.rubric is not None, result.error
    assert [c.id for c in result.rubric.criteria] == ["c01", "c04"]
    assert result.rubric.size_warning and "2 条" in result.rubric.size_warning
    assert tinea_round0().size_warning is None
