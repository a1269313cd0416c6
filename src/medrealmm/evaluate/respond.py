"""The evaluated model's turn: y ~ p_M(. | x), with patient images inline or withheld.

One prompt for every model (paper 7.1: no per-model prompt tricks); per-model decoding comes
from the model spec. Sample i > 0 carries its own seed so k samples are k distinct calls.
"""

from __future__ import annotations

from collections.abc import Sequence

from medrealmm.llm import ChatRequest, GenerationParams, dialogue_messages
from medrealmm.llm.types import Part
from medrealmm.schema import Event

PACKAGE = "medrealmm.evaluate"
RESPOND_TASK = "evaluate.respond"


def sample_params(sample: int, base_seed: int | None) -> GenerationParams:
    """Only the seed is set, and only for samples after the first: everything else (and
    sample 0's seed) comes from the model spec, so each of k samples is its own call."""
    return GenerationParams(seed=(base_seed or 0) + sample) if sample else GenerationParams()


def respond_request(
    *,
    department: str,
    context: Sequence[Event],
    parts: list[Part],
    with_images: bool,
    sample: int = 0,
    base_seed: int | None = None,
) -> ChatRequest:
    """The physician-reply request; ``parts`` is ``dialogue_parts(context, ...)``."""
    return ChatRequest(
        task=RESPOND_TASK,
        messages=dialogue_messages(PACKAGE, "respond", parts, department=department),
        params=sample_params(sample, base_seed),
        inputs={"context": list(context), "with_images": with_images},
    )
