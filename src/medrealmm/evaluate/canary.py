"""Contamination check: the evaluated model is asked to complete the release's canary string.

Every release carries a canary (``release.layout.canary``: a fixed GUID per dataset name) in
its card and files; a model that completes it has very likely seen the release in training.
The check is one call per evaluation of a released benchmark, its answer recorded in the
evaluation's spec. It never changes a score; a failed call is recorded as such.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.llm import ChatRequest, LLMClient, LLMError, render_messages

CANARY_TASK = "evaluate.canary"
PROMPT_PACKAGE = "medrealmm.evaluate"
#: Characters of the GUID shown: enough to name it, far too few to guess the rest (122 bits).
SHOWN_GUID_CHARS = 8


class CanaryCheck(BaseModel):
    """What the model answered when shown the start of the canary."""

    model_config = ConfigDict(extra="forbid")

    prefix: str = Field(description="The start of the canary the model was shown.")
    reply: str | None = None
    completed: bool = Field(
        default=False, description="The reply holds the rest of the canary: likely seen."
    )
    error: str | None = Field(default=None, description="Why no reply came (not a verdict).")


def split_canary(canary: str) -> tuple[str, str]:
    """(shown start, hidden rest): the label and the GUID's first characters are shown."""
    label, _, guid = canary.rpartition(" ")
    cut = len(label) + 1 + SHOWN_GUID_CHARS
    return canary[:cut], canary[cut:] if guid else ""


def completes(reply: str, rest: str) -> bool:
    """Whether ``reply`` carries the hidden rest, ignoring case and spacing."""
    normal = "".join(reply.split()).lower()
    return bool(rest) and "".join(rest.split()).lower() in normal


async def check_canary(client: LLMClient, canary: str) -> CanaryCheck:
    prefix, rest = split_canary(canary)
    request = ChatRequest(
        task=CANARY_TASK,
        messages=render_messages(PROMPT_PACKAGE, "canary", prefix=prefix),
        inputs={"prefix": prefix},
    )
    try:
        completion = await client.complete(request)
    except LLMError as exc:
        return CanaryCheck(prefix=prefix, error=str(exc))
    text = completion.text
    return CanaryCheck(prefix=prefix, reply=text, completed=completes(text, rest))
