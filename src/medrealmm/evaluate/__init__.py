"""Phase 4: inference, per-criterion grading, scoring and worst-of-k (paper 3.4, 7.1, 7.2, 8)."""

from medrealmm.evaluate.baseline import baseline_reply
from medrealmm.evaluate.cases import EvalCase, load_eval_cases
from medrealmm.evaluate.grader import GRADER_TASK, GraderOutput, grade, grader_request
from medrealmm.evaluate.provenance import BenchmarkRef, EvalSpec, ModelRef, load_specs
from medrealmm.evaluate.respond import RESPOND_TASK, respond_request
from medrealmm.evaluate.results import (
    Results,
    baseline_models,
    graders,
    load_results,
    load_scores,
    score_key,
    verdict_key,
)
from medrealmm.evaluate.run import ONLINE, EvalOutcome, EvalSettings, run_eval, run_evaluation
from medrealmm.evaluate.scoring import (
    K_DEFINITIONS,
    K_DEFINITIONS_ZH,
    ModelSummary,
    rubric_score,
    score_case,
    summarize_models,
)

__all__ = [
    "GRADER_TASK",
    "K_DEFINITIONS",
    "K_DEFINITIONS_ZH",
    "ONLINE",
    "RESPOND_TASK",
    "BenchmarkRef",
    "EvalCase",
    "EvalOutcome",
    "EvalSettings",
    "EvalSpec",
    "GraderOutput",
    "ModelRef",
    "ModelSummary",
    "Results",
    "baseline_models",
    "baseline_reply",
    "grade",
    "grader_request",
    "graders",
    "load_eval_cases",
    "load_results",
    "load_scores",
    "load_specs",
    "respond_request",
    "rubric_score",
    "run_eval",
    "run_evaluation",
    "score_case",
    "score_key",
    "summarize_models",
    "verdict_key",
]
