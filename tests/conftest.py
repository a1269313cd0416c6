from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from medrealmm.deid.onnx_env import offline_onnxruntime
from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir

os.environ.setdefault("MEDREALMM_PROGRESS", "0")

# -- the user's home is never written ------------------------------------------------------------
#: The session runs under a throw-away home (config, caches, DUA acceptances), and the commands
#: tests start inherit it; an audit hook refuses, and fails the test of, any write under the
#: real one (a test suite once recorded "Your Name" as accepting every release's DUA there).
REAL_HOME = os.path.realpath(os.path.expanduser("~"))
SESSION_HOME = tempfile.mkdtemp(prefix="medrealmm-test-home-")
os.environ["HOME"] = SESSION_HOME
for _name, _sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_CACHE_HOME", ".cache")):
    os.environ[_name] = os.path.join(SESSION_HOME, _sub)
os.environ.pop("MEDREALMM_DUA_FILE", None)
_HOME_WRITES: list[str] = []
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_TWO_PATHS = frozenset({"os.rename", "os.symlink", "os.link"})
_CHANGE_EVENTS = frozenset(
    {"os.mkdir", "os.remove", "os.rmdir", "os.rename", "os.symlink", "os.link", "shutil.rmtree"}
)


def _under_real_home(path: object) -> str | None:
    if isinstance(path, int) or path is None:
        return None
    absolute = os.path.abspath(os.fsdecode(path))  # type: ignore[arg-type]
    inside = absolute == REAL_HOME or absolute.startswith(REAL_HOME + os.sep)
    return absolute if inside and not absolute.startswith(SESSION_HOME) else None


def _home_guard(event: str, args: tuple[object, ...]) -> None:
    if event == "open":
        path, mode, flags = args
        writes = (
            any(c in mode for c in "wax+")
            if isinstance(mode, str)
            else bool(isinstance(flags, int) and flags & _WRITE_FLAGS)
        )
    elif event in _CHANGE_EVENTS:  # a rename or link creates its second path
        path, writes = (args[1] if event in _TWO_PATHS else args[0]), True
    else:
        return
    where = _under_real_home(path) if writes else None
    if where is None and event in _TWO_PATHS:
        where = _under_real_home(args[0]) if event == "os.rename" else None
    if where is not None:
        _HOME_WRITES.append(f"{event} {where}")
        raise PermissionError(f"a test wrote under the real HOME: {where}")


sys.addaudithook(_home_guard)


@pytest.fixture(autouse=True)
def _never_writes_the_real_home() -> Iterator[None]:
    """Fails the test during which anything was written under the real HOME."""
    before = len(_HOME_WRITES)
    yield
    if len(_HOME_WRITES) > before:
        pytest.fail(f"wrote under the real HOME: {'; '.join(_HOME_WRITES[before:])}")


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
