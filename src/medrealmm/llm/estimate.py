"""Token estimates for ``--dry-run``: what a run would send, before it sends anything.

No tokenizer ships offline with the project (tiktoken fetches its encodings on first use), so
prompt tokens are estimated from characters. Chinese text runs about 1.3-1.6 characters per
token in the BPE vocabularies of current open models (Qwen, DeepSeek, GLM); 1.5 is used, so
the figure is a rough guide, not a bill. Images are counted as a fixed block per image.
Completion tokens are bounded by the call's ``max_tokens``: the estimate is an upper bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from medrealmm.llm.config import ModelSpec
from medrealmm.llm.openai_compat import default_max_tokens
from medrealmm.llm.types import ChatRequest, ImagePart, TextPart

CHARS_PER_TOKEN = 1.5
#: What one image costs in prompt tokens on a typical VLM at its default resolution.
TOKENS_PER_IMAGE = 768


def prompt_tokens(request: ChatRequest) -> int:
    """Estimated prompt tokens of one request (text by characters, images as a block)."""
    chars = images = 0
    for message in request.messages:
        for part in message.content:
            if isinstance(part, TextPart):
                chars += len(part.text)
            elif isinstance(part, ImagePart):
                images += 1
    return math.ceil(chars / CHARS_PER_TOKEN) + images * TOKENS_PER_IMAGE


def max_tokens(spec: ModelSpec, request: ChatRequest) -> int:
    """The output bound a call would carry: the model's setting, else the task default."""
    return request.params.max_tokens or spec.params.max_tokens or default_max_tokens(request.task)


@dataclass
class CallEstimate:
    """The calls one agent would make in a run, and what they would cost at most."""

    agent: str
    model: str
    todo: int = 0
    done: int = 0
    prompt_tokens: int = 0
    max_completion_tokens: int = 0
    offline: bool = False
    price_in: float | None = None
    price_out: float | None = None

    def add(self, spec: ModelSpec, request: ChatRequest) -> None:
        self.todo += 1
        self.prompt_tokens += prompt_tokens(request)
        self.max_completion_tokens += max_tokens(spec, request)

    @property
    def cost(self) -> float | None:
        """Upper-bound cost from the model YAML's prices (None when it declares none)."""
        if self.offline or (self.price_in is None and self.price_out is None):
            return None
        return self.prompt_tokens / 1e6 * (
            self.price_in or 0.0
        ) + self.max_completion_tokens / 1e6 * (self.price_out or 0.0)

    @classmethod
    def of(cls, agent: str, spec: ModelSpec) -> CallEstimate:
        return cls(
            agent=agent,
            model=spec.name,
            offline=spec.backend == "offline",
            price_in=spec.price_per_mtok_in,
            price_out=spec.price_per_mtok_out,
        )
