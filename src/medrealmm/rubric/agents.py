"""The two agents: Generator phi_R(x, y_orig) and Refiner phi'_R(x, R^(k), F^(k)).

Only the Generator sees y_orig; the Refiner works from the dialogue, the current round and
the physicians' feedback. Both go through ``complete_structured``, so an out-of-bounds or
feedback-ignoring reply is shown back to the model and retried, and a final failure is
returned as data.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from medrealmm.llm import (
    ChatRequest,
    Completion,
    LLMClient,
    complete_structured,
    dialogue_messages,
    dialogue_parts,
)
from medrealmm.llm.structured import schema_for
from medrealmm.mccp.taxonomy import builtin_taxonomy
from medrealmm.rubric.assemble import refiner_schema, rubric_from_generator, rubric_from_refiner
from medrealmm.rubric.drafts import GENERATOR_MAX, GENERATOR_MIN, GeneratorOutput, RefinerOutput
from medrealmm.rubric.feedback import ATTRIBUTION, RoundFeedback
from medrealmm.rubric.overlap import flag_reference_overlap
from medrealmm.rubric.settings import MAX_CRITERIA, MIN_CRITERIA, RubricSettings
from medrealmm.schema import MAX_WEIGHT, MIN_WEIGHT, Instance, Rubric

PROMPTS = "medrealmm.rubric"
GENERATOR_TASK = "rubric.generator"
REFINER_TASK = "rubric.refiner"
BOUNDS = {"min_weight": MIN_WEIGHT, "max_weight": MAX_WEIGHT}


@dataclass
class AgentResult:
    rubric: Rubric | None
    error: str | None
    attempts: int
    completions: list[Completion]
    #: Requests the call that failed for good took (0: none did); usage counts them.
    failed_attempts: int = 0


def label_name(taxonomy: str, label: str | None) -> str | None:
    """The Chinese name of an MCCP intent/stage label; the id itself for custom taxonomies."""
    if label is None:
        return None
    return _names(taxonomy).get(label, label)


@cache
def _names(taxonomy: str) -> dict[str, str]:
    """A built-in taxonomy's names by id, made once: a report asks for every criterion."""
    return {item.id: item.name for item in builtin_taxonomy(taxonomy).labels}


def _header(instance: Instance) -> dict[str, object]:
    return {
        "department": instance.department,
        "subspecialty": instance.subspecialty,
        "intent": label_name("intent", instance.intent),
        "stage": label_name("stage", instance.stage),
        **BOUNDS,
    }


async def generate_rubric(
    client: LLMClient,
    instance: Instance,
    settings: RubricSettings,
    *,
    image_root: Path | str | None = None,
) -> AgentResult:
    """R^(0) for one instance, overlap-flagged; ``rubric`` is None when every attempt failed.

    With ``image_root`` the images are inline in the dialogue; the stage decides that.
    """
    messages = dialogue_messages(
        PROMPTS,
        "generator",
        dialogue_parts(instance.context, image_root=image_root),
        **_header(instance),
        image_count=instance.image_count,
        with_images=image_root is not None,
        reference_reply=instance.target_reply,
        min_criteria=GENERATOR_MIN,
        max_criteria=GENERATOR_MAX,
    )
    request = ChatRequest(
        task=GENERATOR_TASK,
        messages=messages,
        inputs={"reference_reply": instance.target_reply, "image_count": instance.image_count},
    )
    result = await complete_structured(client, request, GeneratorOutput)
    rubric = None
    if result.value is not None:
        rubric = rubric_from_generator(instance, result.value, settings)
        rubric = flag_reference_overlap(rubric, instance.target_reply, settings)
    return AgentResult(
        rubric, result.error, result.attempts, result.completions, result.failed_attempts
    )


async def refine_rubric(
    client: LLMClient,
    instance: Instance,
    current: Rubric,
    feedback: RoundFeedback,
    settings: RubricSettings,
    *,
    used_ids: set[str] | None = None,
    image_root: Path | str | None = None,
) -> AgentResult:
    """R^(k+1) from R^(k) and F^(k). The model never sees y_orig; code re-flags overlap with it."""
    criteria = [c.model_dump(mode="json") for c in current.criteria]
    items = [i.model_dump(mode="json", exclude=set(ATTRIBUTION)) for i in feedback.items]
    messages = dialogue_messages(
        PROMPTS,
        "refiner",
        dialogue_parts(instance.context, image_root=image_root),
        **_header(instance),
        round=current.round,
        criteria=criteria,
        feedback=items,
        min_criteria=MIN_CRITERIA,
        max_criteria=MAX_CRITERIA,
    )
    request = ChatRequest(
        task=REFINER_TASK,
        messages=messages,
        # The per-round checked schema validates; the wire schema is the shared base one
        # (same JSON), so the schema cache does not grow a class per call.
        json_schema=schema_for(RefinerOutput),
        inputs={"criteria": criteria, "feedback": items},
    )
    result = await complete_structured(client, request, refiner_schema(current, feedback))
    rubric = None
    if result.value is not None:
        rubric = rubric_from_refiner(current, result.value, used_ids or set())
        rubric = flag_reference_overlap(rubric, instance.target_reply, settings)
    return AgentResult(
        rubric, result.error, result.attempts, result.completions, result.failed_attempts
    )
