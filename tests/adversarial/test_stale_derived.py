"""Issue 46 item 6: folders made from rows that changed never pass for current.

After a shrink or a ``release withdraw``, older ``RUN/release-*`` versions still held and
verified the withdrawn or dropped cases, and ``mccp/instances.jsonl`` and ``rubric/*.jsonl``
kept them. Each such folder is now marked ``STALE`` naming the cases, said in a warning;
``release verify`` and ``eval run`` refuse a stale release, and a rebuild clears it.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from small_runs import build_release, invoke, reviewed_run

from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.mccp import export_outputs
from medrealmm.rubric import RubricSettings
from medrealmm.rubric.exchange import export_round
from medrealmm.store import RunStore, stages


def _stale(folder: Path) -> str:
    marker = folder / "STALE"
    return marker.read_text(encoding="utf-8") if marker.is_file() else ""


def test_a_withdrawal_marks_every_kept_folder_holding_the_case(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run = reviewed_run(tmp_path / "run")
    older = run / "release-1.0"
    assert build_release(run, older)[0] == 0
    with RunStore(run) as store:
        victim = sorted(store.keys(stages.CORPUS_FINAL))[0]
        instance = next(k for k in store.keys(stages.MCCP_INSTANCE) if k.startswith(victim))
        export_outputs(store, run / "mccp")
        store.delete(stages.RUBRIC_FINAL)  # rounds with no final rubric await review: exported
        export_round(store, run / "rubric" / "review.jsonl", run / "rubric" / "feedback.jsonl",
                     RubricSettings())  # fmt: skip
    assert not _stale(older) and not _stale(run / "mccp") and not _stale(run / "rubric")
    assert invoke("release", "verify", str(older))[0] == 0

    with caplog.at_level(logging.WARNING, logger="medrealmm.store"):
        code, output = invoke(
            "release", "withdraw", victim, "--reason", "patient request", "--store", str(run)
        )
    assert code == 0, output
    assert victim in _stale(older) and instance in _stale(run / "mccp")
    assert instance in _stale(run / "rubric")
    said = " ".join(r.getMessage() for r in caplog.records)
    assert all(f"{folder} holds" in said for folder in (older, run / "mccp", run / "rubric"))

    code, output = invoke("release", "verify", str(older))
    assert code == 2 and f"{older} is marked stale" in output and victim in output, output
    code, output = invoke("eval", "run", str(older), "--out", str(tmp_path / "res"))
    assert code == 2 and "marked stale" in output and not (tmp_path / "res").exists(), output

    # a rebuild of each makes it current again: the marker goes with the old files
    assert build_release(run, older)[0] == 0
    assert not _stale(older) and invoke("release", "verify", str(older))[0] == 0
    with RunStore(run) as store:
        export_outputs(store, run / "mccp")
        export_round(store, run / "rubric" / "review.jsonl", run / "rubric" / "feedback.jsonl",
                     RubricSettings())  # fmt: skip
    assert not _stale(run / "mccp") and not _stale(run / "rubric")
    assert victim not in (run / "mccp" / "instances.jsonl").read_text(encoding="utf-8")


def test_a_shrink_marks_the_exports_of_the_dropped_cases(tmp_path: Path) -> None:
    data = bundled_corpus_dir()
    run = str(tmp_path / "run")
    corpus = ("corpus", "build", str(data / CORPUS_FILE), run, "--workers", "1")
    extract = ("mccp", "extract", str(data), run, "--from", "corpus.sampled")
    assert invoke(*corpus, "--limit", "6")[0] == 0
    assert invoke(*extract)[0] == 0
    held = (tmp_path / "run" / "mccp" / "instances.jsonl").read_text(encoding="utf-8")
    assert held.strip() and not _stale(tmp_path / "run" / "mccp")

    code, output = invoke(*corpus, "--limit", "2", "--allow-shrink")
    assert code == 0, output
    marker = _stale(tmp_path / "run" / "mccp")
    assert marker.startswith("This folder holds ") and "no longer holds" in marker
    with RunStore(run, create=False) as store:
        gone = [line for line in marker.split(": ", 1)[1].split(".\n")[0].split(", ")]
        assert gone and not set(gone) & store.keys(stages.MCCP_INSTANCE)

    assert invoke(*extract)[0] == 0  # the stage writes its export again
    assert not _stale(tmp_path / "run" / "mccp")
