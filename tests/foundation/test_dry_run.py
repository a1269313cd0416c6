"""``--dry-run``: the calls a run would make, counted per agent, with nothing sent or written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.llm import LLMCache, LLMClient, ModelSpec
from medrealmm.llm.dryrun import estimate_tokens
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer


@pytest.fixture(autouse=True)
def _no_endpoint_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _extract(demo_dir: Path, run: Path, *extra: str) -> str:
    args = ["mccp", "extract", str(demo_dir), str(run), "--from", "raw", "--limit", "2"]
    result = CliRunner().invoke(app, [*args, *extra])
    assert result.exit_code == 0, result.output
    return result.output


def test_dry_run_sends_nothing_writes_nothing_and_prices_the_plan(
    demo_dir: Path, tmp_path: Path
) -> None:
    with FakeOpenAIServer() as server:
        config = tmp_path / "models.yaml"
        entry = {
            "name": "qwen",
            "base_url": server.base_url,
            "price_per_mtok_in": 2.0,
            "price_per_mtok_out": 8.0,
            "params": {"max_tokens": 100},
        }
        config.write_text(json.dumps({"models": [entry]}), encoding="utf-8")
        run = tmp_path / "run"
        output = _extract(
            demo_dir, run, "--model", "qwen", "--models-config", str(config), "--dry-run"
        )
        assert server.requests == []  # no model call
    assert not run.exists()  # nothing written
    assert re.search(r"mccp\.cropper: [1-9]\d* calls to make", output)
    assert "output tokens, at most" in output and "total:" in output


def _cached_baseline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The offline baseline behind the store's cache, as a served model is (the baseline
    itself is never cached: it answers faster than a lookup), so its calls can be cached."""
    from medrealmm.llm import CachedClient, OfflineClient, session

    real = session.build_client

    def cached(spec: ModelSpec, cache: LLMCache | None = None) -> LLMClient:
        client = real(spec, cache=cache)
        if cache is not None and isinstance(client, OfflineClient):
            return CachedClient(client, cache)
        return client

    monkeypatch.setattr(session, "build_client", cached)


def test_dry_run_counts_cached_answers_and_resumed_units(
    demo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cached_baseline(monkeypatch)
    run = tmp_path / "run"
    _extract(demo_dir, run, "--limit", "1")
    with RunStore(run, create=False) as store:
        done = sorted(store.keys(stages.MCCP_INSTANCE) | store.keys(stages.MCCP_DISCARDED))
    output = _extract(demo_dir, run, "--dry-run")
    assert "resumed, no calls): 1" in output
    assert re.search(r"mccp\.cropper: [1-9]\d* calls to make, 0 answered", output)
    # A unit dropped from the store but answered before is planned from the cache.
    with RunStore(run, writer=True, create=False) as store:
        for stage in (stages.MCCP_INSTANCE, stages.MCCP_DISCARDED):
            for key in done:
                store.delete(stage, key)
    after = (run / "store.sqlite").read_bytes()
    output = _extract(demo_dir, run, "--dry-run", "--limit", "1")
    assert re.search(r"mccp\.cropper: 0 calls to make, [1-9]\d* answered from the cache", output)
    assert (run / "store.sqlite").read_bytes() == after  # the dry runs wrote nothing


def test_token_estimate_counts_chinese_denser_than_ascii() -> None:
    assert estimate_tokens("患者皮疹三天") == 4  # 6 / 1.5
    assert estimate_tokens("abcdefgh") == 2  # 8 / 4


def test_rubric_generate_dry_run_leaves_the_store_as_it_was(demo_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    _extract(demo_dir, run)
    with RunStore(run, create=False) as store:
        instances = store.count(stages.MCCP_INSTANCE)
    before = (run / "store.sqlite").read_bytes()
    result = CliRunner().invoke(app, ["rubric", "generate", str(run), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert f"rubric.generator: {instances} calls to make" in result.output
    assert (run / "store.sqlite").read_bytes() == before
    with RunStore(run, create=False) as store:
        assert store.count(stages.RUBRIC_ROUND) == 0


@pytest.mark.slow  # loads the NER model and masks the case's photos
def test_deid_dry_run_counts_the_llm_pass_and_writes_nothing(
    demo_dir: Path, tmp_path: Path
) -> None:
    from medrealmm.io import iter_jsonl
    from medrealmm.schema import Consultation

    run = tmp_path / "run"
    with RunStore(run) as store:
        store.set_meta(stages.image_root_key(stages.CORPUS_SAMPLED), str(demo_dir))
        cases = iter_jsonl(demo_dir / "consultations.jsonl", Consultation)
        store.put_many(stages.CORPUS_SAMPLED, ((c.id, c) for c in cases if c.id == "demo-001"))
    before = (run / "store.sqlite").read_bytes()
    result = CliRunner().invoke(app, ["deid", "run", str(run), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert re.search(r"deid\.\S+: [1-9]\d* calls to make", result.output)
    assert (run / "store.sqlite").read_bytes() == before and not (run / "deid").exists()
