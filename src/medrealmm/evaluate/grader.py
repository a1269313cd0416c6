"""The Grader phi_J(x, y, c_j) -> (v_j, r_j): one call per criterion (paper 3.4, 7.2).

It is built from the instance context only, never from the instance itself, so the original
physician reply y_orig cannot reach it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from medrealmm.evaluate.respond import PACKAGE
from medrealmm.llm import (
    ChatRequest,
    Completion,
    LLMClient,
    complete_structured,
    dialogue_messages,
)
from medrealmm.llm.types import Part
from medrealmm.schema import Criterion, Event, Verdict, VerdictStatus

GRADER_TASK = "evaluate.grader"


class GraderOutput(BaseModel):
    rationale: str = Field(default="", description="简短理由")
    met: bool = Field(description="回复是否符合该准则的描述")


def grader_request(
    *,
    department: str,
    context: Sequence[Event],
    parts: list[Part],
    criterion: Criterion,
    reply: str,
) -> ChatRequest:
    """``parts`` is ``dialogue_parts(context, ...)`` with or without pixels."""
    return ChatRequest(
        task=GRADER_TASK,
        messages=dialogue_messages(
            PACKAGE,
            "grader",
            parts,
            department=department,
            response=reply,
            criterion=criterion.text,
            weight=criterion.weight,
        ),
        inputs={"criterion": criterion.text, "weight": criterion.weight, "reply": reply},
    )


async def grade(
    client: LLMClient, request: ChatRequest, criterion: Criterion, *, attempts: int = 3
) -> tuple[Verdict, list[Completion], bool, int]:
    """(verdict, completions, retryable, failed_attempts): retryable when the last call never
    came back for a reason that may pass (a permanent error such as a 400 is finished, like a
    malformed one); failed_attempts counts the requests of a call that failed for good."""
    result = await complete_structured(client, request, GraderOutput, attempts=attempts)
    if result.value is not None:
        verdict = Verdict(
            criterion_id=criterion.id,
            value=result.value.met,
            rationale=result.value.rationale,
            grader=client.name,
        )
        return verdict, result.completions, False, 0
    verdict = Verdict(
        criterion_id=criterion.id,
        value=None,
        status=VerdictStatus.FAILED,
        grader=client.name,
        error=result.error,
    )
    transient = not result.permanent and len(result.completions) < result.attempts
    return verdict, result.completions, transient, result.failed_attempts
