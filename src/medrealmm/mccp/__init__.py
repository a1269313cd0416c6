"""Phase 2 (paper 3.2): MCCP extraction with the Cropper and Verifier, intent/stage labels."""

from medrealmm.mccp.agents import (
    CROPPER_TASK,
    INTENT_TASK,
    STAGE_TASK,
    VERIFIER_TASK,
    AgentFailure,
    MccpAgents,
    cropper_request,
    labeler_request,
    verifier_request,
)
from medrealmm.mccp.candidates import candidate_turns, history_up_to, target_reply
from medrealmm.mccp.extract import (
    DiscardRecord,
    MccpSummary,
    export_outputs,
    extract_consultation,
    instance_id,
    run_mccp,
    unmasked_instances,
)
from medrealmm.mccp.selection import CandidateJudgement, discard_reason, select_t_star
from medrealmm.mccp.taxonomy import Taxonomy, builtin_taxonomy, load_taxonomy
from medrealmm.mccp.validation import (
    ValidationDecision,
    ValidationSummary,
    decisions,
    draw_validation_sample,
    export_validation_csv,
    import_validation_csv,
    record_decision,
    summarize_validation,
    validation_sample,
)

__all__ = [
    "CROPPER_TASK",
    "INTENT_TASK",
    "STAGE_TASK",
    "VERIFIER_TASK",
    "AgentFailure",
    "CandidateJudgement",
    "DiscardRecord",
    "MccpAgents",
    "MccpSummary",
    "Taxonomy",
    "ValidationDecision",
    "ValidationSummary",
    "builtin_taxonomy",
    "candidate_turns",
    "cropper_request",
    "decisions",
    "discard_reason",
    "draw_validation_sample",
    "export_outputs",
    "export_validation_csv",
    "extract_consultation",
    "history_up_to",
    "import_validation_csv",
    "instance_id",
    "labeler_request",
    "load_taxonomy",
    "record_decision",
    "run_mccp",
    "select_t_star",
    "summarize_validation",
    "target_reply",
    "unmasked_instances",
    "validation_sample",
    "verifier_request",
]
