"""Issue 46 item 5: one DUA acceptance no longer unlocks every release.

Every builder shipped the demo's agreement and an acceptance was keyed by its hash alone, so
accepting the demo's DUA (or running this test suite, which wrote the user's real
``~/.config/medrealmm/dua-acceptances.json``) unlocked a hospital's release.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from small_runs import DUA_TEXT, dua_file, invoke, reviewed_run

from medrealmm.release.dua import DUANotAccepted, acceptance_file
from medrealmm.release.loader import load_release
from medrealmm.release.texts import demo_dua_text
from medrealmm.store import RunStore, stages


@pytest.fixture(autouse=True)
def _own_acceptances(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDREALMM_DUA_FILE", str(tmp_path / "acceptances.json"))


def _build(run: Path, out: Path, *extra: str) -> tuple[int, str]:
    return invoke("release", "build", str(run), str(out), "--version", "1.0", *extra)


def test_a_builder_must_bring_their_own_dua(tmp_path: Path) -> None:
    run = reviewed_run(tmp_path / "run")
    code, output = _build(run, tmp_path / "rel")
    assert code == 2 and output.startswith("error: give the dataset's own Data Use Agreement")
    assert "--dua FILE" in output and not (tmp_path / "rel").exists()
    code, output = _build(run, tmp_path / "rel", "--dua", str(dua_file(tmp_path)))
    assert code == 0, output
    assert (tmp_path / "rel" / "DUA.md").read_text(encoding="utf-8") == DUA_TEXT


def test_the_demo_dua_is_the_default_only_on_the_demos_run(tmp_path: Path) -> None:
    run = reviewed_run(tmp_path / "run")
    with RunStore(run) as store:
        store.set_meta(stages.DEMO_META, True)
    assert _build(run, tmp_path / "rel")[0] == 0
    assert (tmp_path / "rel" / "DUA.md").read_text(encoding="utf-8") == demo_dua_text()


def test_an_acceptance_unlocks_only_its_dataset(tmp_path: Path) -> None:
    run = reviewed_run(tmp_path / "run")
    dua = str(dua_file(tmp_path))  # the same agreement text for two datasets
    demo, hospital = tmp_path / "demo-like", tmp_path / "hospital"
    assert _build(run, demo, "--dua", dua, "--name", "medrealmm-demo")[0] == 0
    assert _build(run, hospital, "--dua", dua, "--name", "hospital-set")[0] == 0
    assert invoke("release", "accept-dua", str(demo), "--name", "研究员", "--yes")[0] == 0
    assert load_release(demo).acceptance.dataset == "medrealmm-demo"
    with pytest.raises(DUANotAccepted, match="hospital-set"):
        load_release(hospital)
    code, output = invoke("eval", "run", str(hospital), "--out", str(tmp_path / "res"))
    assert code == 2 and "accept-dua" in output, output
    assert invoke("release", "accept-dua", str(hospital), "--name", "研究员", "--yes")[0] == 0
    assert load_release(hospital).acceptance.dataset == "hospital-set"


def test_the_suite_never_writes_the_real_home(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    guards = [p for p in request.config.pluginmanager.get_plugins() if hasattr(p, "_HOME_WRITES")]
    assert guards, "tests/conftest.py guards the real HOME"
    guard = guards[0]
    assert Path.home() != Path(guard.REAL_HOME)
    monkeypatch.delenv("MEDREALMM_DUA_FILE")
    assert str(acceptance_file()).startswith(guard.SESSION_HOME + os.sep)
    before = len(guard._HOME_WRITES)
    probe = os.path.join(guard.REAL_HOME, ".medrealmm-home-guard-probe")
    with pytest.raises(PermissionError, match="real HOME"):
        open(probe, "w")  # noqa: SIM115 - refused before the file exists
    assert not os.path.exists(probe)
    assert len(guard._HOME_WRITES) == before + 1
    del guard._HOME_WRITES[before:]  # the probe was this test's own, not a leak
