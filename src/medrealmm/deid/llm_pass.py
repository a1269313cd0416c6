"""The LLM pass (agent ``deid.text_llm``): a model reads the rule-masked dialogue and names
what the rules missed. It only ever sees text the rules have already masked.

Its offline baseline lives in ``deid/baseline.py``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.deid.spans import EntityType, Span
from medrealmm.llm import (
    ChatRequest,
    LLMClient,
    StructuredResult,
    complete_structured,
    render_messages,
)

TASK = "deid.text_llm"


class ProposedSpan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turn: int = Field(ge=0)
    text: str = Field(min_length=1)
    type: EntityType


class TextLLMOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spans: list[ProposedSpan] = Field(default_factory=list)


def build_request(masked_turns: Sequence[str]) -> ChatRequest:
    return ChatRequest(
        task=TASK,
        messages=render_messages("medrealmm.deid", "text_llm", turns=list(masked_turns)),
        inputs={"turns": list(masked_turns)},
    )


async def propose_spans(
    client: LLMClient, masked_turns: Sequence[str]
) -> StructuredResult[TextLLMOutput]:
    return await complete_structured(client, build_request(masked_turns), TextLLMOutput)


def locate(
    proposals: Sequence[ProposedSpan], texts: Sequence[str], taken: Sequence[list[Span]]
) -> list[list[Span]]:
    """Turn proposals (turn, text) into offsets in the original texts, skipping anything
    that overlaps a span already found, holds a placeholder, or is not in that turn."""
    added: list[list[Span]] = [[] for _ in texts]
    for proposal in proposals:
        if proposal.turn >= len(texts) or "[" in proposal.text:
            continue
        text = texts[proposal.turn]
        occupied = [*taken[proposal.turn], *added[proposal.turn]]
        for match in re.finditer(re.escape(proposal.text), text):
            span = Span(
                start=match.start(),
                end=match.end(),
                type=proposal.type,
                text=proposal.text,
                source="llm",
            )
            if not any(span.overlaps(other) for other in occupied):
                added[proposal.turn].append(span)
                occupied.append(span)
    return added
