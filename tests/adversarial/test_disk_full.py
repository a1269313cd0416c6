"""A full disk mid-command: one line naming the file and the room to free, exit 2, nothing
half written, and the same command run again finishes as if nothing had happened.

The disk fills in a subprocess: SQLite's own limit on a database's pages (``max_page_count``)
gives its real "database or disk is full", and a file write is made to fail with ENOSPC."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from medrealmm.store import RunStore, stages

#: Runs the console script's ``main`` with the disk made full in one way or the other.
PRELUDE = r"""
import errno, os, sqlite3, sys

mode = sys.argv.pop(1)
if mode == "sqlite":
    real_connect = sqlite3.connect

    def connect(path, *args, **kwargs):
        db = real_connect(path, *args, **kwargs)
        if str(path).endswith("store.sqlite"):
            db.execute("PRAGMA max_page_count = 24")
        return db

    sqlite3.connect = connect
elif mode == "write":
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, handle):
            self.handle = handle

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def __getattr__(self, name):
            return getattr(self.handle, name)

    def fdopen(fd, *args, **kwargs):
        handle = real_fdopen(fd, *args, **kwargs)
        if "corpus.sampled" in os.readlink(f"/proc/self/fd/{fd}"):
            return Full(handle)
        return handle

    os.fdopen = fdopen

from medrealmm.cli import main

sys.argv = ["medrealmm", *sys.argv[1:]]
main()
"""

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


def _build(mode: str, corpus: Path, run: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "400"}
    return subprocess.run(
        [sys.executable, "-c", PRELUDE, mode, "corpus", "build", str(corpus), str(run)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _sampled(run: Path) -> list[str]:
    with RunStore(run) as store:
        return sorted(store.keys(stages.CORPUS_SAMPLED))


def _intact(run: Path) -> None:
    db = sqlite3.connect(run / "store.sqlite")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        db.close()
    assert not [p.name for p in run.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("mode", "where"), [("sqlite", "store.sqlite"), ("write", "corpus.sampled")]
)
def test_a_full_disk_is_one_line_and_the_rerun_finishes(
    demo_corpus: Path, tmp_path: Path, mode: str, where: str
) -> None:
    run = tmp_path / "run"
    full = _build(mode, demo_corpus, run)
    assert full.returncode == 2, full.stderr[-2000:]
    assert "Traceback" not in full.stderr, full.stderr[-2000:]
    error = [line for line in full.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "disk full writing" in error[0] and where in error[0], full.stderr
    assert "free at least" in error[0]
    _intact(run)
    again = _build("none", demo_corpus, run)
    assert again.returncode == 0, again.stderr[-2000:]
    clean = _build("none", demo_corpus, tmp_path / "clean")
    assert clean.returncode == 0
    assert _sampled(run) == _sampled(tmp_path / "clean") and _sampled(run)
    _intact(run)
