"""The four Phase 2 agents: Cropper φ_A, Verifier φ_M, and the intent/stage labelers.

Each agent is a request builder (pure: prompt template + ``inputs`` for the offline
baseline) and one structured call. The Verifier's builder takes only C<=t, so no later
event can reach its prompt or its inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from medrealmm.llm import (
    ChatRequest,
    LLMClient,
    StructuredResult,
    complete_structured,
    dialogue_messages,
    dialogue_parts,
    send_pixels,
)
from medrealmm.mccp.candidates import history_up_to, physician_turn_span, target_reply
from medrealmm.mccp.taxonomy import Taxonomy
from medrealmm.schema import AgentJudgement, Consultation, Event

M = TypeVar("M", bound=BaseModel)

PROMPTS = "medrealmm.mccp"
CROPPER_TASK = "mccp.cropper"
VERIFIER_TASK = "mccp.verifier"
INTENT_TASK = "mccp.intent"
STAGE_TASK = "mccp.stage"


class JudgementOutput(BaseModel):
    """What the Cropper and the Verifier must reply: (l, s) plus a one-line reason."""

    label: bool
    score: float = Field(ge=0.0, le=1.0)
    reason: str = ""

    def judgement(self) -> AgentJudgement:
        return AgentJudgement(label=self.label, score=self.score, reason=self.reason)


class AgentFailure(RuntimeError):
    """An agent gave no valid output after its retries; the consultation is marked failed."""

    def __init__(self, task: str, error: str) -> None:
        self.task = task
        super().__init__(f"{task}: {error}")


def cropper_request(consultation: Consultation, t: int) -> ChatRequest:
    """φ_A(t, C): the whole trajectory, with the physician turn after e_t singled out."""
    events = consultation.events
    span = physician_turn_span(events, t)
    return ChatRequest(
        task=CROPPER_TASK,
        messages=dialogue_messages(
            PROMPTS,
            "cropper",
            dialogue_parts(events, image_root=None),
            department=consultation.department,
            t=t,
            reply_first=span.start + 1,
            reply_last=span.stop,
            reply=target_reply(events, t),
        ),
        inputs={"events": list(events), "t": t},
    )


def verifier_request(
    department: str, context: Sequence[Event], *, image_root: Path | str | None = None
) -> ChatRequest:
    """φ_M(t, C<=t): built from the history alone, so nothing after e_t can leak in.

    With ``image_root`` the images are inline in the dialogue; without, text only.
    """
    t = len(context) - 1
    context = list(context)
    image_count = sum(len(event.patient_medical_images) for event in context)
    messages = dialogue_messages(
        PROMPTS,
        "verifier",
        dialogue_parts(context, image_root=image_root),
        department=department,
        t=t,
        image_count=image_count,
        with_images=image_root is not None,
    )
    return ChatRequest(task=VERIFIER_TASK, messages=messages, inputs={"events": context, "t": t})


def labeler_request(
    task: str, taxonomy: Taxonomy, department: str, context: Sequence[Event]
) -> ChatRequest:
    """φ_I(x) or φ_S(x): sees the instance x only, never the target reply."""
    context = list(context)
    return ChatRequest(
        task=task,
        messages=dialogue_messages(
            PROMPTS,
            "labeler",
            dialogue_parts(context, image_root=None),
            title=taxonomy.title,
            labels=taxonomy.labels,
            question=taxonomy.question,
            department=department,
        ),
        inputs={"events": context, "taxonomy": taxonomy},
    )


UsageHook = Callable[[StructuredResult[Any]], None]


@cache
def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """Generated once per schema: regenerating it per call was half the offline run time."""
    return schema.model_json_schema()


@dataclass
class MccpAgents:
    """The agents bound to one client; ``on_result`` records usage for every call, failed
    ones included.

    The Verifier sees pixels when ``verifier_images`` asks for them and the client reads
    images (``send_pixels``); ``image_root`` must then be known.
    """

    client: LLMClient
    intent_taxonomy: Taxonomy
    stage_taxonomy: Taxonomy
    image_root: Path | str | None = None
    verifier_images: bool = False
    on_result: UsageHook | None = None

    async def _structured(self, request: ChatRequest, schema: type[M]) -> M:
        request = request.model_copy(update={"json_schema": json_schema(schema)})
        result = await complete_structured(self.client, request, schema)
        if self.on_result is not None:
            self.on_result(result)
        if result.value is None:
            raise AgentFailure(request.task, result.error or "no valid output")
        return result.value

    async def crop(self, consultation: Consultation, t: int) -> AgentJudgement:
        output = await self._structured(cropper_request(consultation, t), JudgementOutput)
        return output.judgement()

    async def verify(self, consultation: Consultation, t: int) -> AgentJudgement:
        pixels = send_pixels(self.client, self.verifier_images)
        request = verifier_request(
            consultation.department,
            history_up_to(consultation.events, t),
            image_root=self.image_root if pixels else None,
        )
        return (await self._structured(request, JudgementOutput)).judgement()

    async def label(self, task: str, department: str, context: Sequence[Event]) -> str:
        taxonomy = self.intent_taxonomy if task == INTENT_TASK else self.stage_taxonomy
        request = labeler_request(task, taxonomy, department, context)
        output = await self._structured(request, taxonomy.output_schema)
        return str(output.label)
