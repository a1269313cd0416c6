from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from medrealmm.deid.onnx_env import offline_onnxruntime
from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir

os.environ.setdefault("MEDREALMM_PROGRESS", "0")
# Before any test module imports onnxruntime at collection (test_deid_ocr_speed does): the
# runtime may read its telemetry switch then, not at the library's first session.
offline_onnxruntime()


@pytest.fixture(autouse=True)
def _no_automatic_probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Scripted fake servers count every request, so the automatic capability probe is off
    unless a test turns it on (the probe's own tests and the real-server tier do)."""
    from medrealmm.llm import probe

    monkeypatch.setenv(probe.PROBE_ENV, "off")
    probe._announced.clear()
    yield
    probe._announced.clear()


@pytest.fixture()
def demo_dir() -> Path:
    return bundled_corpus_dir()


@pytest.fixture()
def demo_corpus(demo_dir: Path) -> Path:
    return demo_dir / CORPUS_FILE


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The whole offline demo, run once per test session (it is minutes of OCR on 2 cores).

    Tests that only read its outputs share it; a test that needs its own run makes one.
    """
    from medrealmm.pipeline import run_demo

    out = tmp_path_factory.mktemp("demo-run")
    return out, run_demo(out)


@pytest.fixture()
def fake_openai() -> Iterator[object]:
    from medrealmm.testing import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        yield server
