"""A throw-away copy of a run folder's store, for ``--dry-run``: the stage runs on the copy,
so the real store, its cache and the run folder are left exactly as they were."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from medrealmm.store.runstore import STORE_FILENAME, existing_store, store_file


@contextmanager
def scratch_run(run_dir: Path, *, enabled: bool = True, must_exist: bool = True) -> Iterator[Path]:
    """Yield ``run_dir`` itself when not ``enabled``; else a temporary folder holding a
    consistent copy of its store (SQLite's backup API, safe while another reader has it open),
    or no store at all when there is none yet and ``must_exist`` is False."""
    if not enabled:
        yield run_dir
        return
    source = existing_store(run_dir) if must_exist else store_file(run_dir)
    with tempfile.TemporaryDirectory(prefix="medrealmm-dry-run-") as folder:
        if source.is_file():
            src, dst = sqlite3.connect(source), sqlite3.connect(Path(folder) / STORE_FILENAME)
            try:
                src.backup(dst)
            finally:
                src.close()
                dst.close()
        yield Path(folder)
