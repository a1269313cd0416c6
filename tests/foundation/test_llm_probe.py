"""``medrealmm models probe``: structured mode, vision and context window asked of the server,
kept per endpoint in the run store, and never overriding what the YAML declares."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.llm import ModelSpec, load_model_specs
from medrealmm.llm.probe import Capabilities, apply, context_window, store_key
from medrealmm.store import RunStore
from medrealmm.testing import FakeOpenAIServer, FakeReply


def text_only_llama(body: dict[str, Any]) -> FakeReply:
    """Like llama.cpp without a projector: no json_schema mode, no image parts."""
    if (body.get("response_format") or {}).get("type") == "json_schema":
        return FakeReply(status=400, content="json_schema is not supported")
    if any(isinstance(m["content"], list) for m in body["messages"]):
        return FakeReply(status=500, content="image input is not supported")
    return FakeReply(content='{"ok": true}')


@pytest.fixture(autouse=True)
def _no_endpoint_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_probe_finds_mode_vision_and_context_and_keeps_them_in_the_run_store(
    tmp_path: Path,
) -> None:
    meta = {"meta": {"n_ctx_train": 8192}}
    with FakeOpenAIServer(text_only_llama, served_models=["smol"], model_info=meta) as server:
        config = tmp_path / "models.yaml"
        entry = {"name": "smol", "model": "smol", "base_url": server.base_url}
        config.write_text(json.dumps({"models": [entry]}), encoding="utf-8")
        RunStore(tmp_path / "run").close()
        args = ["models", "probe", "smol", "--models-config", str(config)]
        result = CliRunner().invoke(app, [*args, "--run", str(tmp_path / "run")])
        assert result.exit_code == 0, result.output
        calls = len(server.requests)
        assert calls >= 2
        again = CliRunner().invoke(app, [*args, "--run", str(tmp_path / "run")])
        assert again.exit_code == 0 and "from the run store" in again.output
        assert len(server.requests) == calls  # reused, not asked again
        spec = load_model_specs(config)["smol"]
    with RunStore(tmp_path / "run", create=False) as store:
        caps = Capabilities.model_validate(store.get_meta(store_key(spec)))
    assert caps.structured_mode == "json_object_schema"
    assert caps.vision is False and caps.context_window == 8192


def test_declared_yaml_values_win_over_the_probe(tmp_path: Path) -> None:
    config = tmp_path / "models.yaml"
    entry = {"name": "q", "base_url": "http://127.0.0.1:9/v1", "vision": True}
    config.write_text(json.dumps({"models": [entry]}), encoding="utf-8")
    spec = load_model_specs(config)["q"]
    caps = Capabilities(
        base_url="u", model="q", structured_mode="json_object", vision=False, context_window=4096
    )
    used, sources = apply(spec, caps)
    assert used.vision is True and sources["vision"] == "declared"
    assert used.structured_mode == "json_object" and sources["structured_mode"] == "probed"
    assert used.context_window == 4096
    unknown = Capabilities(base_url="u", model="q")
    assert apply(ModelSpec(name="q"), unknown)[1]["context_window"] == "default"


def test_context_window_is_read_where_servers_put_it() -> None:
    assert context_window({"id": "m", "max_model_len": 32768}) == 32768  # vLLM
    assert context_window({"id": "m", "meta": {"n_ctx_train": 2048}}) == 2048  # llama.cpp
    assert context_window({"id": "m"}) is None and context_window(None) is None


def _yaml(tmp_path: Path, entry: dict[str, Any]) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(json.dumps({"models": [entry]}), encoding="utf-8")
    return path


def test_open_client_probes_once_per_store_and_applies_what_the_server_can_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from medrealmm.llm import probe as probing
    from medrealmm.llm.session import open_client

    monkeypatch.setenv(probing.PROBE_ENV, "on")
    with FakeOpenAIServer(text_only_llama) as server, RunStore(tmp_path / "run") as store:
        config = _yaml(tmp_path, {"name": "smol", "base_url": server.base_url})
        client = open_client("smol", config, store.cache, meta=store)
        asked = len(server.requests)
        assert asked >= 2 and client.vision is False
        again = open_client("smol", config, store.cache, meta=store)
        assert len(server.requests) == asked and again.vision is False
        caps = Capabilities.model_validate(
            store.get_meta(store_key(load_model_specs(config)["smol"]))
        )
        assert caps.structured_mode == "json_object_schema"


def test_no_probe_for_the_offline_baseline_a_fully_declared_model_or_a_dry_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from medrealmm.llm import probe as probing
    from medrealmm.llm.session import open_client

    monkeypatch.setenv(probing.PROBE_ENV, "on")
    with FakeOpenAIServer(text_only_llama) as server, RunStore(tmp_path / "run") as store:
        assert open_client("offline", None, store.cache, meta=store).is_baseline
        declared = {
            "name": "full",
            "base_url": server.base_url,
            "structured_mode": "json_object",
            "vision": True,
            "context_window": 4096,
        }
        assert open_client("full", _yaml(tmp_path, declared), store.cache, meta=store).vision
        dry = open_client(
            "smol",
            _yaml(tmp_path, {"name": "smol", "base_url": server.base_url}),
            store.cache,
            meta=store,
            probe=False,
        )
        assert dry.vision is True  # nothing kept yet, nothing asked
        assert server.requests == []


def test_a_failed_probe_keeps_the_yaml_values_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from medrealmm.llm import probe as probing

    monkeypatch.setenv(probing.PROBE_ENV, "on")

    def broken(spec: ModelSpec) -> Capabilities:
        raise RuntimeError("server went away")

    monkeypatch.setattr(probing, "_probe_now", broken)
    spec = ModelSpec(name="m", base_url="http://127.0.0.1:9/v1")
    with RunStore(tmp_path / "run") as store, caplog.at_level(logging.WARNING):
        used = probing.with_capabilities(spec, store)
        assert used == spec and store.get_meta(store_key(spec)) is None  # asked again next run
    assert "probe of http://127.0.0.1:9/v1 failed" in caplog.text


def test_the_probe_waits_as_long_as_the_run_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow server's probe times out by the model's ``timeout_s`` (or ``--timeout``), not
    by a limit of its own: a server slower than that limit answered the run but not the probe."""
    import asyncio

    from medrealmm.llm import openai_compat
    from medrealmm.llm import probe as probing
    from medrealmm.llm.config import TIMEOUT_ENV

    seen: list[float] = []
    real = openai_compat.OpenAICompatibleClient

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["timeout_s"])
        return real(*args, **kwargs)

    monkeypatch.setattr(openai_compat, "OpenAICompatibleClient", recording)
    with FakeOpenAIServer(text_only_llama) as server:
        spec = ModelSpec(name="slow", base_url=server.base_url, timeout_s=300.0)
        asyncio.run(probing.probe(spec))
        monkeypatch.setenv(TIMEOUT_ENV, "45")
        asyncio.run(probing.probe(spec))
    assert seen == [300.0, 45.0]
