"""Every stage and meta name in the run store: the contract between phases.

Each stage's rows are keyed as noted (composite keys are typed in ``store/keys.py``);
payloads are the named schema models. Image paths in a stage's consultations are relative to
that stage's image root, kept in store meta under ``image_root_key(stage)``.
"""

from __future__ import annotations

from medrealmm.store.keys import ResponseKey

RAW = "raw"  # Consultation, key = consultation id
CORPUS_DROPPED = "corpus.dropped"  # medrealmm.corpus drop record, key = consultation id
CORPUS_PRIVACY = "corpus.privacy"  # corpus PrivacyScreen (stage 4a), key = source case id
CORPUS_SAMPLED = "corpus.sampled"  # Consultation C3 (after image, completeness, balance, 4a)
CORPUS_DEID = "corpus.deid"  # Consultation C4 (masked text, masked image copies)
# medrealmm.deid.record.DeidRecord (spans, boxes per image), key = consultation id
DEID_RECORD = "deid.record"
CORPUS_FINAL = "corpus.final"  # Consultation C (approved by both review passes)
CORPUS_REVIEW_TASK = "corpus.review.task"  # corpus.review.ReviewTask, key = task key
CORPUS_REVIEW_DECISION = "corpus.review.decision"  # ReviewDecision, key = task key
CORPUS_REVIEW_AUDIT = "corpus.review.audit"  # AuditPlan, key = consultation id
CORPUS_REVIEW_OUTCOME = "corpus.review.outcome"  # ReviewOutcome, key = consultation id
MCCP_INSTANCE = "mccp.instance"  # Instance, key = instance id
MCCP_DISCARDED = "mccp.discarded"  # discard record, key = consultation id
MCCP_VALIDATION = "mccp.validation"  # physician accept/reject, key = f"{reviewer}|{instance id}"
RUBRIC_ROUND = "rubric.round"  # Rubric, key = f"{instance_id}#{round:02d}"
RUBRIC_FINAL = "rubric.final"  # Rubric (approved), key = instance id
RUBRIC_FEEDBACK = "rubric.feedback"  # rubric.RoundFeedback, key = f"{instance_id}#{round:02d}"
EVAL_SPEC = "eval.spec"  # medrealmm.evaluate.provenance.EvalSpec, key = eval id
EVAL_RESPONSE = "eval.response"  # Response, key = response_key(...)
EVAL_VERDICT = "eval.verdict"  # Verdict, key = f"{grader}|{response key}|{criterion id}"
EVAL_SCORE = "eval.score"  # CaseScore, key = f"{grader}|{response key}"
PANEL_VERDICT = (
    "panel.verdict"  # Verdict by a physician, key = f"{reviewer}|{response key}|{criterion id}"
)
RELEASE_WITHDRAWN = "release.withdrawn"  # release Withdrawal, key = consultation id
#: What each release version built from this run shipped: {version: {"consultations": [ids],
#: "instances": [ids]}}; the next version's changelog lists the cases it adds against it.
RELEASE_VERSIONS_META = "release.versions"

# -- meta names (store.set_meta / get_meta) ----------------------------------------------
INPUT_META = "input"  # {"path", "sha256"} of the file the raw stage was ingested from
CORPUS_MANIFEST_META = "corpus.manifest"  # corpus Manifest of the last `corpus build`
MCCP_SAMPLE_META = "mccp.validation.sample"  # {"n", "seed", "ids"} drawn for physicians
# The stage mccp.instance was extracted from: instances from an un-masked stage carry PHI into
# every later call (rubric generation, respondents, graders), which must then stay at home.
MCCP_SOURCE_META = "mccp.source_stage"
#: The points setting MCCP extraction ran with ({"points": k, "min_gap": g}, with
#: "points_slice": N when only the first N consultations take k); one per run.
MCCP_POINTS_META = "mccp.points"
PRIMARY_GRADER_META = "eval.primary_grader"
# {model name: {"in": USD per 1M prompt tokens, "out": per 1M completion tokens}} from the
# model YAML of the runs that used them: usage tables price their tokens with it.
PRICES_META = "llm.prices"  # the grader whose scores the report leads with
#: set when the panel's verdicts were simulated (the demo): a note the report shows beside them
PANEL_SIMULATED_META = "panel.simulated"
REVIEW_SECRET_META = "review:secret"  # the review app's session-signing secret
#: set by `medrealmm demo` on its run: only there does a release default to the demo's DUA
DEMO_META = "demo"


#: Stages holding patient data that de-identification has not masked.
UNMASKED_STAGES = frozenset({RAW, CORPUS_SAMPLED})


def image_root_key(stage: str) -> str:
    return f"image_root:{stage}"


def built_key(stage: str) -> str:
    """Meta marking that the stage that writes ``stage`` has run (it may hold no rows)."""
    return f"built:{stage}"


def response_key(model: str, images: bool, instance_id: str, sample: int) -> str:
    return ResponseKey(model, images, instance_id, sample).format()
