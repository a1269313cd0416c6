"""PHI stays home: a model is remote only where someone configured its base URL, and stages that
see un-masked data refuse a non-loopback host unless its config says ``phi: allowed``.

Every CLI test runs with all network egress recorded (``egress`` fixture) and fails on any
host nobody configured."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.llm import (
    ModelSpec,
    OpenAICompatibleClient,
    PHIEgressError,
    UnknownModelError,
    build_client,
    guard_unmasked,
    resolve_spec,
)
from medrealmm.testing import FakeOpenAIServer, FakeReply

KEEP = json.dumps({"remove": False, "reason": "可保留"}, ensure_ascii=False)


@pytest.fixture(autouse=True)
def _no_endpoint_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _models_yaml(tmp_path: Path, **entry: object) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(json.dumps({"models": [{"max_attempts": 1, **entry}]}), encoding="utf-8")
    return path


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, result.output


def test_misspelled_privacy_model_is_an_error_not_the_public_endpoint(
    demo_corpus: Path, tmp_path: Path, egress: object
) -> None:
    code, output = _invoke(
        "corpus", "build", str(demo_corpus), str(tmp_path / "run"), "--privacy-model", "ofline"
    )
    assert code == 2
    assert "unknown model 'ofline'" in output and "known: offline" in output
    assert egress.hosts == []  # type: ignore[attr-defined]
    assert not (tmp_path / "run" / "store.sqlite").exists()  # refused before any work


def test_name_missing_from_models_config_lists_the_known_names(tmp_path: Path) -> None:
    config = _models_yaml(tmp_path, name="qwen", model="q", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(UnknownModelError, match=r"known: offline, qwen"):
        resolve_spec("gpt-4o", config)


@pytest.mark.parametrize(
    "args",
    [
        ("deid", "run", "{run}", "--model", "gpt-4o"),
        ("mccp", "extract", "{corpus}", "{run}", "--model", "gpt-4o", "--from", "raw"),
    ],
    ids=["deid", "mccp"],
)
def test_every_command_refuses_an_unconfigured_model(
    args: tuple[str, ...], demo_dir: Path, tmp_path: Path, egress: object
) -> None:
    run = tmp_path / "run"
    code, output = _invoke(
        *(a.format(run=run, corpus=demo_dir) for a in args),
    )
    assert code != 0
    assert "Traceback" not in output
    assert egress.remote() == []  # type: ignore[attr-defined]


def test_unmasked_stage_refuses_a_remote_host_without_phi_allowed(
    demo_corpus: Path, tmp_path: Path, egress: object
) -> None:
    config = _models_yaml(
        tmp_path, name="hosted", model="gpt-x", base_url="https://api.example.com/v1"
    )
    code, output = _invoke(
        "corpus", "build", str(demo_corpus), str(tmp_path / "run"),
        "--privacy-model", "hosted", "--models-config", str(config),
    )  # fmt: skip
    assert code == 2 and "api.example.com" in output and "phi: allowed" in output
    assert egress.hosts == []  # type: ignore[attr-defined]


def test_corpus_and_deid_talk_only_to_the_configured_loopback_host(
    demo_corpus: Path, tmp_path: Path, egress: object, caplog: pytest.LogCaptureFixture
) -> None:
    run = tmp_path / "run"
    with FakeOpenAIServer(lambda body: FakeReply(content=KEEP)) as server:
        config = _models_yaml(tmp_path, name="local", model="m", base_url=server.base_url)
        with caplog.at_level(logging.WARNING, logger="medrealmm.egress"):
            code, output = _invoke(
                "corpus", "build", str(demo_corpus), str(run),
                "--privacy-model", "local", "--models-config", str(config),
            )  # fmt: skip
        assert code == 0, output
        assert server.requests  # the screen did call the configured server
    assert set(egress.hosts) <= {"127.0.0.1", "localhost"}  # type: ignore[attr-defined]
    assert egress.hosts  # type: ignore[attr-defined]
    assert "corpus stage 4a privacy screen: sending un-masked patient data to 127.0.0.1" in (
        caplog.text
    )


def test_openai_base_url_serves_ad_hoc_model_ids(
    monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAIServer
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    spec = resolve_spec("Qwen/Qwen3-VL-8B")
    assert spec.base_url == fake_openai.base_url and spec.model == "Qwen/Qwen3-VL-8B"


def test_phi_allowed_is_the_only_way_to_a_remote_host_for_unmasked_data() -> None:
    remote = ModelSpec(name="h", model="m", base_url="https://api.example.com/v1")
    with pytest.raises(PHIEgressError, match="not loopback"):
        guard_unmasked(remote, "deid LLM pass")
    allowed = remote.model_copy(update={"phi": "allowed"})
    assert guard_unmasked(allowed, "deid LLM pass") == "api.example.com"
    for url in ("http://127.0.0.1:8000/v1", "http://localhost:1/v1", "http://[::1]:2/v1"):
        local = ModelSpec(name="l", model="m", base_url=url)
        assert guard_unmasked(local, "deid LLM pass") is not None
    assert guard_unmasked(resolve_spec("offline"), "deid LLM pass") is None


def test_no_client_without_an_explicit_base_url() -> None:
    with pytest.raises(UnknownModelError, match="no base_url"):
        build_client(ModelSpec(name="x", model="x"))
    with pytest.raises(ValueError, match="no base_url"):
        OpenAICompatibleClient("x")


def test_instances_cut_from_unmasked_data_keep_later_steps_at_home(
    demo_dir: Path, tmp_path: Path, egress: object
) -> None:
    """The egress rule follows the data: rubric and eval on instances extracted from raw refuse
    a remote host, though their own stages carry no 'un-masked' name."""
    config = _models_yaml(
        tmp_path, name="hosted", model="gpt-x", base_url="https://api.example.com/v1"
    )
    run = str(tmp_path / "run")
    extract = ("mccp", "extract", str(demo_dir), run, "--from", "raw", "--limit", "2")
    assert _invoke(*extract)[0] == 0
    code, output = _invoke(
        "rubric", "generate", run, "--model", "hosted", "--models-config", str(config)
    )
    assert code == 2 and "api.example.com" in output and "phi: allowed" in output
    assert "'raw'" in output
    assert _invoke("rubric", "generate", run)[0] == 0  # the offline baseline stays home
    code, output = _invoke(
        "eval", "run", run, "--out", str(tmp_path / "eval"),
        "--grader", "hosted", "--models-config", str(config),
    )  # fmt: skip
    assert code == 2 and "phi: allowed" in output, output
    assert egress.hosts == []  # type: ignore[attr-defined]
