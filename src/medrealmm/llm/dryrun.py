"""``--dry-run``: the calls a run would make, counted and priced, with no model called.

The stage runs as usual on a scratch copy of the run store, so its own resume rules decide
which units are left; each request it builds is checked against the response cache (same key
as the real client) and then answered by the offline baseline, so chained agents go on. Counts
after the first agent of a chain follow the baseline's answers: an estimate, labelled as such.

Prompt tokens are estimated without a tokenizer download: ~1.5 Chinese characters a token
(Qwen/GLM/DeepSeek vocabularies land between 1.3 and 1.8) and ~4 other characters a token,
plus each image by OpenAI's high-detail tile rule from its header size (fit in 2048x2048, shortest
side to 768, 170 per 512-pixel tile + 85; local VLMs vary); a text-only model gets no image.
The output bound is each call's max_tokens; costs use the model YAML's prices.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from medrealmm.io.images import data_url_size
from medrealmm.llm.cache import LLMCache, cache_key
from medrealmm.llm.client import LLMClient
from medrealmm.llm.config import ModelSpec, with_overrides
from medrealmm.llm.offline import OfflineClient
from medrealmm.llm.openai_compat import default_max_tokens
from medrealmm.llm.types import ChatRequest, Completion, ImagePart, TextPart

CJK_CHARS_PER_TOKEN = 1.5
OTHER_CHARS_PER_TOKEN = 4.0
TILE = 512
TOKENS_PER_TILE = 170
TOKENS_PER_IMAGE_BASE = 85


def estimate_tokens(text: str) -> int:
    """Prompt tokens of ``text`` by the documented characters-per-token ratios."""
    cjk = sum(1 for ch in text if "\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef")
    return round(cjk / CJK_CHARS_PER_TOKEN + (len(text) - cjk) / OTHER_CHARS_PER_TOKEN)


def image_tokens(width: int, height: int) -> int:
    """OpenAI's high-detail estimate: scale to fit 2048x2048, then the shortest side to 768
    (never up), then 170 tokens per 512-pixel tile plus 85."""
    scale = min(1.0, 2048 / max(width, height))
    scale *= min(1.0, 768 / (min(width, height) * scale))
    tiles = math.ceil(round(width * scale) / TILE) * math.ceil(round(height * scale) / TILE)
    return TOKENS_PER_TILE * tiles + TOKENS_PER_IMAGE_BASE


@dataclass
class TaskPlan:
    """What one agent (task) would ask: calls still to make and answers the cache holds."""

    to_call: int = 0
    cached: int = 0
    prompt_tokens: int = 0  # estimated, calls to make only, image tokens included
    images: int = 0
    image_tokens: int = 0  # the images' share of prompt_tokens
    output_bound: int = 0  # sum of max_tokens over calls to make

    def cost(self, spec: ModelSpec) -> float | None:
        if spec.price_per_mtok_in is None and spec.price_per_mtok_out is None:
            return None
        prompt = self.prompt_tokens * (spec.price_per_mtok_in or 0.0)
        return (prompt + self.output_bound * (spec.price_per_mtok_out or 0.0)) / 1e6


class DryRunClient:
    """Stands in for ``real`` (same name, vision and cache identity); never sends anything."""

    is_baseline = False
    #: It sizes each image from its pixels to count the tokens a real call would send.
    reads_pixels = True

    def __init__(self, real: LLMClient, spec: ModelSpec, cache: LLMCache | None) -> None:
        self.real = real
        self.spec = with_overrides(spec)
        self.cache = cache
        self.name = real.name
        self.vision = real.vision
        self.is_baseline = real.is_baseline
        self.plan: dict[str, TaskPlan] = defaultdict(TaskPlan)
        self._answer = OfflineClient()
        #: tokens per image digest: a case's image is read from its header once, not per call
        self._image_tokens: dict[str, int] = {}

    def cache_identity(self, request: ChatRequest) -> str:
        return self.real.cache_identity(request)

    async def complete(self, request: ChatRequest) -> Completion:
        task = self.plan[request.task]
        key = cache_key(self.real.cache_identity(request), request)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            task.cached += 1
            return hit.model_copy(update={"cached": True})
        task.to_call += 1
        for message in request.messages:
            for part in message.content:
                if isinstance(part, TextPart):
                    task.prompt_tokens += estimate_tokens(part.text)
                elif isinstance(part, ImagePart) and self.vision:
                    tokens = self._tokens_of(part)
                    task.images += 1
                    task.image_tokens += tokens
                    task.prompt_tokens += tokens
        task.output_bound += (
            request.params.max_tokens
            or self.spec.params.max_tokens
            or default_max_tokens(request.task)
        )
        if self.real.is_baseline:
            return await self.real.complete(request)
        return await self._answer.complete(request)

    def _tokens_of(self, part: ImagePart) -> int:
        found = self._image_tokens.get(part.digest)
        if found is None:
            found = self._image_tokens[part.digest] = image_tokens(*data_url_size(part.url))
        return found

    def forget(self, request: ChatRequest) -> None:
        """Nothing was stored."""

    async def aclose(self) -> None:
        await self.real.aclose()
        await self._answer.aclose()

    def lines(self) -> list[str]:
        """The plan as printable lines, one per agent, then the total."""
        out = [f"dry run for {self.name}: nothing was sent and nothing written"]
        total = TaskPlan()
        for name, task in sorted(self.plan.items()):
            out.append(_line(name, task, self.spec))
            for field in (
                "to_call",
                "cached",
                "prompt_tokens",
                "images",
                "image_tokens",
                "output_bound",
            ):
                setattr(total, field, getattr(total, field) + getattr(task, field))
        out.append(_line("total", total, self.spec))
        out.append(
            f"(prompt tokens estimated at {CJK_CHARS_PER_TOKEN} Chinese / "
            f"{OTHER_CHARS_PER_TOKEN:g} other characters a token, images by OpenAI's "
            "high-detail tile rule from their size; "
            "calls after an agent's first follow the offline baseline's answers)"
        )
        return out


def _line(name: str, task: TaskPlan, spec: ModelSpec) -> str:
    cost = task.cost(spec)
    priced = f", at most {cost:.4f} in the YAML's currency" if cost is not None else ""
    return (
        f"  {name}: {task.to_call} calls to make, {task.cached} answered from the cache; "
        f"~{task.prompt_tokens} prompt tokens, of which ~{task.image_tokens} image tokens "
        f"({task.images} images), "
        f"<= {task.output_bound} output tokens{priced}"
    )


#: Set while a whole chain runs dry (``medrealmm run --dry-run``): every client a stage opens
#: through ``llm.session.open_client`` is then a ``DryRunClient`` collected here.
_collected: ContextVar[list[DryRunClient] | None] = ContextVar("dry_run_clients", default=None)


@contextmanager
def dry_run_everywhere() -> Iterator[list[DryRunClient]]:
    """Within the block every client opened is a ``DryRunClient``; yields them as they come."""
    clients: list[DryRunClient] = []
    token = _collected.set(clients)
    try:
        yield clients
    finally:
        _collected.reset(token)


def collecting() -> list[DryRunClient] | None:
    """The clients of the dry run in progress, or None outside one."""
    return _collected.get()
