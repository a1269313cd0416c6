"""Each case's images are base64-encoded and hashed once, not once per criterion call."""

from __future__ import annotations

import pytest

from medrealmm.evaluate import EvalSettings, run_evaluation
from medrealmm.llm import cache as llm_cache
from medrealmm.llm import dialogue
from medrealmm.schema import Instance
from medrealmm.store import RunStore, stages


def test_images_are_encoded_and_hashed_once_per_case(
    eval_store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded: list[str] = []
    real = dialogue.image_data_url

    def counting(path: object) -> str:
        encoded.append(str(path))
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(dialogue, "image_data_url", counting)
    llm_cache.image_digest.cache_clear()
    run_evaluation(eval_store, EvalSettings(model="offline", k=2))
    images = sum(i.image_count for i in eval_store.iter(stages.MCCP_INSTANCE, Instance))
    assert images > 0
    assert len(encoded) == images  # 2 replies and every criterion share one encoding
    info = llm_cache.image_digest.cache_info()
    assert info.misses == images  # each image hashed once for the cache key ...
    assert info.hits > info.misses  # ... and looked up for the other calls of its case
