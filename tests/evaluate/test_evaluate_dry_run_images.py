"""The eval dry run counts image tokens by OpenAI's high-detail tile rule, from header sizes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PIL import Image

from medrealmm.evaluate import EvalSettings
from medrealmm.evaluate.dryrun import plan_evaluation
from medrealmm.io import image_data_url
from medrealmm.llm import ChatRequest, ImagePart, Message, TextPart
from medrealmm.llm.config import ModelSpec
from medrealmm.llm.dryrun import DryRunClient, image_tokens
from medrealmm.store import RunStore


@pytest.mark.parametrize(
    ("width", "height", "tokens"),
    [(1024, 1024, 765), (2048, 4096, 1105), (100, 100, 255), (4096, 8192, 1105)],
)
def test_tile_rule(width: int, height: int, tokens: int) -> None:
    assert image_tokens(width, height) == tokens


class _Stub:
    """A real client's face for the dry run: a name and whether it reads images."""

    is_baseline = False
    reads_pixels = True

    def __init__(self, vision: bool) -> None:
        self.name = "vlm"
        self.vision = vision

    def cache_identity(self, request: ChatRequest) -> str:
        return self.name

    async def aclose(self) -> None:
        return None


def _png(tmp_path: Path, width: int, height: int) -> ImagePart:
    path = tmp_path / f"{width}x{height}.png"
    Image.new("RGB", (width, height), "white").save(path)
    return ImagePart(url=image_data_url(path))


def _planned(vision: bool, parts: list[ImagePart]) -> DryRunClient:
    spec = ModelSpec(name="vlm", base_url="http://127.0.0.1:9/v1", vision=vision)
    client = DryRunClient(_Stub(vision), spec, None)  # type: ignore[arg-type]
    content = [TextPart(text="看图"), *parts]
    request = ChatRequest(
        task="evaluate.respond",
        messages=[Message(role="user", content=content)],
        inputs={"context": [], "with_images": True},
    )
    asyncio.run(client.complete(request))
    return client


def test_image_tokens_come_from_each_image_size(tmp_path: Path) -> None:
    parts = [_png(tmp_path, 1024, 1024), _png(tmp_path, 2048, 4096)]
    (task,) = _planned(True, parts).plan.values()
    assert task.images == 2 and task.image_tokens == 765 + 1105
    assert task.prompt_tokens > task.image_tokens  # the text is counted beside them
    lines = _planned(True, parts).lines()
    assert any("~1870 image tokens (2 images)" in line for line in lines)


def test_a_text_only_model_gets_no_image_tokens(tmp_path: Path) -> None:
    (task,) = _planned(False, [_png(tmp_path, 1024, 1024)]).plan.values()
    assert task.images == 0 and task.image_tokens == 0


def test_eval_dry_run_counts_images_only_when_they_are_sent(eval_store: RunStore) -> None:
    def image_tokens_of(settings: EvalSettings) -> int:
        clients, _ = plan_evaluation(eval_store, settings)
        return sum(t.image_tokens for c in clients for t in c.plan.values())

    assert image_tokens_of(EvalSettings(model="offline", limit=1)) > 0
    off = EvalSettings(model="offline", images=False, grader_images=False, limit=1)
    assert image_tokens_of(off) == 0
