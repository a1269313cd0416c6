"""Rule-based criteria: checked in code, never by an LLM.

A verdict v_j says whether the criterion's text is true of the response, as for LLM
criteria. A positive rule criterion describes the constraint held ("不超过 N 字"), a negative
one describes it broken ("超出 N 字"), so v_j is the rule's outcome or its negation.
"""

from __future__ import annotations

import math

from medrealmm.rubric.settings import RubricSettings
from medrealmm.schema import Criterion, CriterionKind, MaxCharsRule, MinCharsRule, Verdict
from medrealmm.schema.rubric import Axis

RULE_GRADER = "rule"
LENGTH_TAG = "length_limit"


def reply_length(text: str) -> int:
    """Characters a patient reads: whitespace does not count."""
    return sum(1 for ch in text if not ch.isspace())


def case_length_limit(reference_reply: str, settings: RubricSettings) -> int:
    """A case-specific limit: room for a fuller reply than the online one, never past the
    platform's cap, rounded up to tens so physicians read a round number."""
    scaled = math.ceil(reply_length(reference_reply) * settings.length_factor / 10) * 10
    return min(settings.platform_char_limit, max(settings.min_length_limit, scaled))


def length_criterion(criterion_id: str, limit: int, weight: int) -> Criterion:
    if weight < 0:
        text = f"回复超出本病例的单轮字数上限（{limit}字），不符合平台简洁作答的要求"
    else:
        text = f"回复长度控制在本病例的单轮字数上限（{limit}字）以内"
    return Criterion(
        id=criterion_id,
        text=text,
        weight=weight,
        kind=CriterionKind.RULE,
        rule=MaxCharsRule(limit=limit),
        tags=[LENGTH_TAG],
        axis=Axis.COMMUNICATION,  # HealthBench counts response length as communication
    )


def rule_holds(rule: MaxCharsRule | MinCharsRule, text: str) -> bool:
    length = reply_length(text)
    if isinstance(rule, MaxCharsRule):
        return length <= rule.limit
    return length >= rule.limit


def grade_rule(criterion: Criterion, response: str) -> Verdict:
    """The verdict for a rule criterion; raises for an LLM criterion (it needs the Grader)."""
    if criterion.kind is not CriterionKind.RULE or criterion.rule is None:
        raise ValueError(f"criterion {criterion.id} is not rule-based")
    held = rule_holds(criterion.rule, response)
    bound = "上限" if isinstance(criterion.rule, MaxCharsRule) else "下限"
    rationale = f"回复共{reply_length(response)}字，{bound}{criterion.rule.limit}字"
    return Verdict(
        criterion_id=criterion.id,
        value=held if criterion.weight > 0 else not held,
        rationale=rationale,
        grader=RULE_GRADER,
    )
