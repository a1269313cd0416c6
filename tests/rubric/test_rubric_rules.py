"""Rule-based length criteria (no LLM) and the reference-overlap flag."""

from __future__ import annotations

from medrealmm.rubric import (
    OVERLAP_TAG,
    RubricSettings,
    case_length_limit,
    flag_reference_overlap,
    grade_rule,
    length_criterion,
    reference_overlap,
)
from medrealmm.schema import Criterion, Instance, Rubric


def test_case_length_limit_scales_with_the_online_reply_within_the_platform_cap() -> None:
    settings = RubricSettings(platform_char_limit=300, length_factor=2.0, min_length_limit=100)
    assert case_length_limit("好" * 99, settings) == 200
    assert case_length_limit("好" * 20, settings) == 100
    assert case_length_limit("好" * 400, settings) == 300
    assert case_length_limit("  " + "好" * 101 + "\n", settings) == 210


def test_rule_verdict_says_whether_the_criterion_text_holds() -> None:
    penalty = length_criterion("c09", 10, -5)  # "回复超出 ... 上限"
    reward = length_criterion("c09", 10, 3)  # "回复 ... 以内"
    short, long = "好的，请多喝水", "好" * 11
    assert grade_rule(penalty, short).value is False
    assert grade_rule(penalty, long).value is True
    assert grade_rule(reward, short).value is True
    assert grade_rule(reward, long).value is False
    verdict = grade_rule(penalty, long)
    assert verdict.grader == "rule" and "11字" in verdict.rationale


def test_grade_rule_refuses_llm_criteria() -> None:
    import pytest

    with pytest.raises(ValueError, match="not rule-based"):
        grade_rule(Criterion(id="c01", text="判断为足癣", weight=5), "x")


def test_copied_wording_is_flagged_and_paraphrase_is_not(tinea_instance: Instance) -> None:
    reply = tinea_instance.target_reply
    copied = "建议外用联苯苄唑乳膏，每日一次，连续使用4周"
    paraphrase = "推荐足疗程外用抗真菌药物，并说明疗程长短"
    assert reference_overlap(copied, reply, 4) == 1.0
    assert reference_overlap(paraphrase, reply, 4) < 0.2
    rubric = Rubric(
        instance_id="tinea@4",
        criteria=[
            Criterion(id="c01", text=copied, weight=8, tags=[OVERLAP_TAG]),
            Criterion(id="c02", text=paraphrase, weight=8, tags=[OVERLAP_TAG, "x"]),
            length_criterion("c03", 99, -5),
        ],
    )
    flagged = flag_reference_overlap(rubric, reply, RubricSettings())
    assert [c.tags for c in flagged.criteria[:2]] == [[OVERLAP_TAG], ["x"]]
    assert OVERLAP_TAG not in flagged.criteria[2].tags
