"""The Grader phi_J(x, y, c_j) -> (v_j, r_j): one call per criterion (paper 3.4, 7.2).

It is built from the instance context only, never from the instance itself, so the original
physician reply y_orig cannot reach it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from medrealmm.evaluate.respond import PACKAGE
from medrealmm.llm import (
    ChatRequest,
    Completion,
    LLMClient,
    complete_structured,
    dialogue_messages,
)
from medrealmm.llm.dialogue import WITHHELD_IMAGE, PresetMessages, slot_marker
from medrealmm.llm.types import Message, Part, TextPart
from medrealmm.schema import Criterion, Event, Verdict, VerdictStatus

GRADER_TASK = "evaluate.grader"


class GraderOutput(BaseModel):
    rationale: str = Field(default="", description="简短理由")
    met: bool = Field(description="回复是否符合该准则的描述")
    cannot_assess: bool = Field(
        default=False, description="图片无法辨认或问诊记录缺少判断所需信息时为 true"
    )


def verdict_of(output: GraderOutput, criterion_id: str, grader: str) -> Verdict:
    """The verdict a parsed grader answer stands for: "cannot assess" outranks ``met``."""
    if output.cannot_assess:
        return Verdict(
            criterion_id=criterion_id,
            value=None,
            status=VerdictStatus.ABSTAINED,
            rationale=output.rationale,
            grader=grader,
        )
    return Verdict(
        criterion_id=criterion_id, value=output.met, rationale=output.rationale, grader=grader
    )


class _Weight(int):
    """A weight as the template's ``weight > 0`` sees it that prints as its slot's marker."""

    def __str__(self) -> str:
        return slot_marker("weight")


class GraderPrompt:
    """The grader requests of one reply: its user template is rendered once per sign of the
    weight (the one thing the template branches on), not once per criterion, and each
    criterion's text and weight are filled in; the messages are those of a full render."""

    def __init__(self, department: str, reply: str) -> None:
        self.department = department
        self.reply = reply
        self._presets: dict[bool, PresetMessages] = {}

    def _preset(self, positive: bool) -> PresetMessages:
        found = self._presets.get(positive)
        if found is None:
            found = self._presets[positive] = PresetMessages(
                PACKAGE,
                "grader",
                {"department": self.department, "response": self.reply},
                {"criterion": slot_marker("criterion"), "weight": _Weight(1 if positive else -1)},
            )
        return found

    def request(self, parts: list[Part], criterion: Criterion) -> ChatRequest:
        """``parts`` is ``dialogue_parts(context, ...)`` with or without pixels."""
        messages = self._preset(criterion.weight > 0).messages(
            parts, criterion=criterion.text, weight=criterion.weight
        )
        return _request(messages, criterion, self.reply, parts)


def grader_request(
    *,
    department: str,
    context: Sequence[Event],
    parts: list[Part],
    criterion: Criterion,
    reply: str,
    examples: Sequence[Mapping[str, object]] = (),
) -> ChatRequest:
    """One grader request, its template rendered in full; ``parts`` is
    ``dialogue_parts(context, ...)`` with or without pixels. The criteria of one reply share a
    ``GraderPrompt`` instead, which gives the same messages. ``examples`` fill the template's
    few-shot block (calibration); none render nothing."""
    messages = dialogue_messages(
        PACKAGE,
        "grader",
        parts,
        department=department,
        response=reply,
        criterion=criterion.text,
        weight=criterion.weight,
        examples=list(examples),
    )
    return _request(messages, criterion, reply, parts)


def images_withheld(parts: Sequence[Part]) -> bool:
    """Whether the dialogue shows an image's marker without its pixels."""
    return any(isinstance(part, TextPart) and WITHHELD_IMAGE in part.text for part in parts)


def _request(
    messages: list[Message], criterion: Criterion, reply: str, parts: Sequence[Part]
) -> ChatRequest:
    return ChatRequest(
        task=GRADER_TASK,
        messages=messages,
        inputs={
            "criterion": criterion.text,
            "weight": criterion.weight,
            "reply": reply,
            "images_withheld": images_withheld(parts),
        },
    )


async def grade(
    client: LLMClient, request: ChatRequest, criterion: Criterion, *, attempts: int = 3
) -> tuple[Verdict, list[Completion], bool, int]:
    """(verdict, completions, retryable, failed_attempts): retryable when the last call never
    came back for a reason that may pass (a permanent error such as a 400 is finished, like a
    malformed one); failed_attempts counts the requests of a call that failed for good."""
    result = await complete_structured(client, request, GraderOutput, attempts=attempts)
    if result.value is not None:
        return verdict_of(result.value, criterion.id, client.name), result.completions, False, 0
    verdict = Verdict(
        criterion_id=criterion.id,
        value=None,
        status=VerdictStatus.FAILED,
        grader=client.name,
        error=result.error,
    )
    transient = not result.permanent and len(result.completions) < result.attempts
    return verdict, result.completions, transient, result.failed_attempts


GROUPED_TASK = "evaluate.grader_grouped"


class GroupedItem(GraderOutput):
    id: str = Field(description="准则编号")


class GroupedOutput(BaseModel):
    """All of a reply's criteria in one answer (``--grading grouped``)."""

    verdicts: list[GroupedItem]


def grouped_request(
    *, department: str, parts: list[Part], criteria: Sequence[Criterion], reply: str
) -> ChatRequest:
    """One grader request for several LLM criteria of ``reply``, each shown with its id."""
    items = [{"id": c.id, "text": c.text, "weight": c.weight} for c in criteria]
    messages = dialogue_messages(
        PACKAGE, "grader_grouped", parts, department=department, response=reply, criteria=items
    )
    return ChatRequest(
        task=GROUPED_TASK,
        messages=messages,
        inputs={"criteria": items, "reply": reply, "images_withheld": images_withheld(parts)},
    )


async def grade_grouped(
    client: LLMClient,
    request: ChatRequest,
    criteria: Sequence[Criterion],
    grader: str,
    *,
    attempts: int = 3,
) -> tuple[dict[str, Verdict], list[Completion], bool, int]:
    """``grade`` for one grouped call: a verdict per criterion. A criterion the answer leaves
    out (or a call that failed) gets a failed verdict naming why, never a guess or an
    abstention; the first item given for an id counts."""
    result = await complete_structured(client, request, GroupedOutput, attempts=attempts)
    if result.value is None:
        transient = not result.permanent and len(result.completions) < result.attempts
        failed = {
            c.id: Verdict(
                criterion_id=c.id,
                value=None,
                status=VerdictStatus.FAILED,
                grader=grader,
                error=result.error,
            )
            for c in criteria
        }
        return failed, result.completions, transient, result.failed_attempts
    given: dict[str, GroupedItem] = {}
    for item in result.value.verdicts:
        given.setdefault(item.id.strip().strip("[]"), item)
    verdicts = {}
    for criterion in criteria:
        item = given.get(criterion.id)
        if item is None:
            verdicts[criterion.id] = Verdict(
                criterion_id=criterion.id,
                value=None,
                status=VerdictStatus.FAILED,
                grader=grader,
                error="[malformed_output] the grouped answer has no item for this criterion",
            )
        else:
            verdicts[criterion.id] = verdict_of(item, criterion.id, grader)
    return verdicts, result.completions, False, 0
