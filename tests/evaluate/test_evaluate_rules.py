from __future__ import annotations

from medrealmm.evaluate.lexical import judge
from medrealmm.rubric.rules import grade_rule, reply_length
from medrealmm.schema import Criterion, CriterionKind, MaxCharsRule, MinCharsRule


def _rule(weight: int, rule: MaxCharsRule | MinCharsRule) -> Criterion:
    return Criterion(id="len", text="长度", weight=weight, kind=CriterionKind.RULE, rule=rule)


def test_length_ignores_whitespace() -> None:
    assert reply_length("您好 ，\n请 复诊") == 6


def test_positive_max_chars_rule_rewards_replies_within_the_limit() -> None:
    criterion = _rule(3, MaxCharsRule(limit=5))
    assert grade_rule(criterion, "一二三四五").value is True
    assert grade_rule(criterion, "一二三四五六").value is False
    assert grade_rule(criterion, "一二三").grader == "rule"


def test_negative_max_chars_rule_penalises_replies_over_the_limit() -> None:
    criterion = _rule(-3, MaxCharsRule(limit=5))
    assert grade_rule(criterion, "一二三四五六").value is True  # triggered
    assert grade_rule(criterion, "一二三").value is False


def test_min_chars_rule() -> None:
    assert grade_rule(_rule(2, MinCharsRule(limit=4)), "一二三四").value is True
    assert grade_rule(_rule(2, MinCharsRule(limit=4)), "一二三").value is False


def test_lexical_positive_criterion_needs_its_content_words() -> None:
    assert judge("建议外用联苯苄唑乳膏", 5, "可以外用联苯苄唑乳膏，每日一次。").met
    assert not judge("建议外用联苯苄唑乳膏", 5, "请多喝水，注意休息。").met


def test_lexical_negative_commission_respects_negation() -> None:
    criterion = "建议自行口服抗真菌药"
    assert judge(criterion, -5, "可以自行口服抗真菌药。").met
    assert not judge(criterion, -5, "不建议自行口服抗真菌药。").met
    assert not judge(criterion, -5, "请保持足部干燥。").met


def test_lexical_negative_omission_is_triggered_when_content_is_missing() -> None:
    criterion = "未提醒患者症状加重时线下就诊"
    assert judge(criterion, -4, "请保持足部干燥。").met
    assert not judge(criterion, -4, "如症状加重请及时线下就诊。").met


def test_lexical_compound_omission_judges_its_first_clause() -> None:
    criterion = "未结合患者上传的图片作答，或对图片内容作出错误解读"
    assert not judge(criterion, -6, "从图片看，趾缝浸渍发白。").met
    assert judge(criterion, -6, "请多喝水。").met


def test_lexical_rationale_names_the_baseline() -> None:
    assert "离线基线" in judge("询问病史", 2, "请问病史").rationale
