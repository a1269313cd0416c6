"""Phase 3: case-specific rubrics with the physician-in-the-loop refinement loop (paper 3.3).

Generator phi_R(x, y_orig) -> R^(0); physicians give structured feedback F^(k); Refiner
phi'_R(x, R^(k), F^(k)) -> R^(k+1); empty feedback approves R* = R^(k). Every round is kept.
"""

from medrealmm.rubric.agents import AgentResult, generate_rubric, refine_rubric
from medrealmm.rubric.diff import RubricDiff, diff_rubrics
from medrealmm.rubric.feedback import (
    FeedbackError,
    FeedbackItem,
    FeedbackType,
    RoundFeedback,
    SplitPart,
    check_feedback,
)
from medrealmm.rubric.overlap import OVERLAP_TAG, flag_reference_overlap, reference_overlap
from medrealmm.rubric.rounds import (
    RubricState,
    approve,
    evaluation_rubrics,
    final_rubric,
    latest_round,
    load_feedback,
    pending_review,
    round_history,
    round_key,
    rubric_for_evaluation,
    save_feedback,
    state_of,
    states,
    validate_feedback,
)
from medrealmm.rubric.rules import case_length_limit, grade_rule, length_criterion, rule_holds
from medrealmm.rubric.settings import MAX_CRITERIA, MIN_CRITERIA, RubricSettings

__all__ = [
    "MAX_CRITERIA",
    "MIN_CRITERIA",
    "OVERLAP_TAG",
    "AgentResult",
    "FeedbackError",
    "FeedbackItem",
    "FeedbackType",
    "RoundFeedback",
    "RubricDiff",
    "RubricSettings",
    "RubricState",
    "SplitPart",
    "approve",
    "case_length_limit",
    "check_feedback",
    "diff_rubrics",
    "evaluation_rubrics",
    "final_rubric",
    "flag_reference_overlap",
    "generate_rubric",
    "grade_rule",
    "latest_round",
    "length_criterion",
    "load_feedback",
    "pending_review",
    "reference_overlap",
    "refine_rubric",
    "round_history",
    "round_key",
    "rubric_for_evaluation",
    "rule_holds",
    "save_feedback",
    "state_of",
    "states",
    "validate_feedback",
]
