"""Issue 46 items 1, 2 and 11: an output never destroys an input.

A dotted output name (``--out results-0.2``, the README's own) was taken for the database file,
the current folder for the run, and the release being evaluated beside it was deleted. Output
options could overwrite the run store with JSON. A refused command left a store behind, and a
killed release build its hidden staging folder of released data.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from small_runs import accepted_release, build_release, invoke, reviewed_run
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.store import RunStore
from medrealmm.store.runstore import is_sqlite_file


@pytest.fixture()
def beside_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding ``release/`` (accepted), the current folder, as a user has it."""
    monkeypatch.setenv("MEDREALMM_DUA_FILE", str(tmp_path / "dua.json"))
    accepted_release(reviewed_run(tmp_path / "run"), tmp_path / "here" / "release")
    monkeypatch.chdir(tmp_path / "here")
    return tmp_path / "here"


def test_a_dotted_out_is_a_folder_and_the_release_beside_it_stays(beside_release: Path) -> None:
    code, output = invoke("eval", "run", "release", "--out", "results-0.2", "--model", "offline")
    assert code == 0, output
    assert (beside_release / "release" / "manifest.json").is_file()
    assert invoke("release", "verify", "release")[0] == 0
    assert is_sqlite_file(beside_release / "results-0.2" / "store.sqlite")
    assert "results in results-0.2" in output
    code, output = invoke("eval", "score", "results-0.2", "--json", "scores-0.2.json")
    assert code == 0 and (beside_release / "scores-0.2.json").is_file(), output


def test_an_out_holding_the_release_is_refused(beside_release: Path) -> None:
    code, output = invoke("eval", "run", "release", "--out", ".", "--model", "offline")
    assert code == 2 and output.startswith("error: --out . holds the input release"), output
    assert not (beside_release / "store.sqlite").exists()
    assert invoke("release", "verify", "release")[0] == 0


def test_a_store_path_ending_in_sqlite_is_the_store_itself(beside_release: Path) -> None:
    code, output = invoke("eval", "run", "release", "--out", "sub/res.sqlite", "--model", "offline")
    assert code == 0 and is_sqlite_file(beside_release / "sub" / "res.sqlite"), output
    assert invoke("eval", "score", "sub/res.sqlite")[0] == 0
    # beside the release, its run folder would be the one holding the release: refused
    code, output = invoke("eval", "run", "release", "--out", "res.sqlite", "--model", "offline")
    assert code == 2 and "holds the input release" in output, output
    assert not (beside_release / "res.sqlite").exists()
    helped = CliRunner().invoke(app, ["eval", "run", "--help"], env={"COLUMNS": "1000"})
    assert "only a path ending in .sqlite, or an existing SQLite file" in helped.output


def test_a_dotted_run_folder_is_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    corpus = str(bundled_corpus_dir() / CORPUS_FILE)
    code, output = invoke("corpus", "build", corpus, "run.v1", "--limit", "4", "--workers", "1")
    assert code == 0, output
    assert is_sqlite_file(tmp_path / "run.v1" / "store.sqlite")
    assert (tmp_path / "run.v1" / "manifest.json").is_file()


def test_a_refused_command_creates_nothing(beside_release: Path) -> None:
    data = str(bundled_corpus_dir())
    code, output = invoke("mccp", "extract", data, "r2", "--model", "ofline")
    assert code == 2 and "unknown model 'ofline'" in output, output
    assert not (beside_release / "r2").exists()
    code, output = invoke("eval", "run", "release", "--out", "r3", "--model", "ofline")
    assert code == 2 and "unknown model 'ofline'" in output, output
    assert not (beside_release / "r3").exists()
    # an existing run keeps what it had: only what the refused command made goes
    assert invoke("eval", "run", "release", "--out", "r4", "--model", "offline")[0] == 0
    assert invoke("eval", "run", "release", "--out", "r4", "--model", "ofline")[0] == 2
    assert is_sqlite_file(beside_release / "r4" / "store.sqlite")


@pytest.mark.parametrize(
    "command",
    [
        ("eval", "score", "res", "--json", "res/store.sqlite"),
        ("eval", "score", "res", "--json", "res/store.sqlite.lock"),
        ("eval", "score", "res", "--json", "res"),
        ("review", "export-suspects", "--store", "res", "--out", "res/store.sqlite"),
        ("eval", "meta", "res", "--csv", "res/store.sqlite-wal"),
        ("report", "res", "res"),
        ("report", "res", "."),
        ("report", "res", "release/report"),
        ("eval", "run", "release", "--out", "release/results"),
        ("mccp", "export-validation", "res", "--to", "res/store.sqlite"),
    ],
    ids=lambda c: " ".join(c[:2]) + " " + c[-1],
)
def test_an_output_never_overwrites_the_store_a_release_or_an_input(
    beside_release: Path, command: tuple[str, ...]
) -> None:
    assert invoke("eval", "run", "release", "--out", "res", "--model", "offline")[0] == 0
    store = beside_release / "res" / "store.sqlite"
    before = store.read_bytes()
    code, output = invoke(*command)
    assert code == 2 and output.startswith("error: "), output
    assert output.count("error:") == 1 and "Traceback" not in output
    assert is_sqlite_file(store) and store.read_bytes() == before
    assert invoke("release", "verify", "release")[0] == 0
    with RunStore(store, create=False) as reopened:
        assert reopened.count("mccp.instance")


def test_deid_image_never_overwrites_its_input(tmp_path: Path) -> None:
    image = tmp_path / "in.png"
    image.write_bytes(next((bundled_corpus_dir() / "images").rglob("*.png")).read_bytes())
    before = image.read_bytes()
    code, output = invoke("deid", "image", str(image), str(image))
    assert code == 2 and "is the input" in output, output
    assert image.read_bytes() == before


def test_a_build_removes_what_killed_builds_left(tmp_path: Path) -> None:
    run = reviewed_run(tmp_path / "run")
    out = tmp_path / "rel"
    killed = [tmp_path / ".rel.x1y2z3ab.building", tmp_path / f".rel.pid{2**22 + 7}-ab.building"]
    running = tmp_path / ".rel.pid1-cd.building"  # pid 1 is alive: a build still going
    for folder in (*killed, running):
        (folder / "data").mkdir(parents=True)
        (folder / "data" / "consultations.parquet").write_bytes(b"partial released data")
    other = tmp_path / ".other.x1.building"  # another release's: not this build's to clean
    other.mkdir()
    code, output = build_release(run, out)
    assert code == 0, output
    assert not any(folder.exists() for folder in killed)
    assert running.exists() and other.exists()
    assert (out / "manifest.json").is_file()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".rel.") and "pid1-" not in p]
