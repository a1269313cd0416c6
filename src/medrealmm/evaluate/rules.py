"""Rule criteria (paper 3.3: case-specific length limits) checked in code, without an LLM.

A rule states a limit; the weight's sign says what is judged. A positive criterion is met
when the reply keeps the rule (rewarding a reply within the limit); a negative criterion is
triggered when the reply breaks it (penalising one over the limit).
"""

from __future__ import annotations

from medrealmm.schema import Criterion, MaxCharsRule, MinCharsRule, Verdict

RULE_GRADER = "rule"


def reply_length(text: str) -> int:
    """Characters a patient reads: whitespace does not count."""
    return sum(1 for ch in text if not ch.isspace())


def rule_holds(criterion: Criterion, text: str) -> tuple[bool, str]:
    rule = criterion.rule
    length = reply_length(text)
    if isinstance(rule, MaxCharsRule):
        return length <= rule.limit, f"回复长度 {length} 字，上限 {rule.limit} 字"
    if isinstance(rule, MinCharsRule):
        return length >= rule.limit, f"回复长度 {length} 字，下限 {rule.limit} 字"
    raise ValueError(f"criterion {criterion.id!r} has no rule spec")


def grade_rule(criterion: Criterion, text: str) -> Verdict:
    holds, detail = rule_holds(criterion, text)
    met = holds if criterion.is_positive else not holds
    verdict = "满足" if met else "不满足"
    return Verdict(
        criterion_id=criterion.id,
        value=met,
        rationale=f"规则判定：{detail}；{'遵守' if holds else '违反'}规则，准则{verdict}。",
        grader=RULE_GRADER,
    )
