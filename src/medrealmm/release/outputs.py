"""The one check of an output path before a command writes it: an output never overwrites a
run store, its lock or journal, a release, or the command's own input.

Every command's output option (``--json``, ``--csv``, ``--out``, ``--to``, a report or release
folder, an export) passes through ``check_output`` before anything is written; a refusal is
one line naming the option and what the path would have destroyed.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from medrealmm.release.loader import is_release
from medrealmm.store.lock import lock_path
from medrealmm.store.runstore import STORE_FILENAME, STORE_SUFFIX, is_sqlite_file

#: The files SQLite and the writer lock keep beside a store (``store.sqlite`` + these).
STORE_COMPANIONS = ("", ".lock", "-wal", "-shm", "-journal")


class OutputRefused(ValueError):
    """An output path that would overwrite the store, a release or an input."""


def _store_files(store: Path) -> set[Path]:
    return {store.with_name(store.name + end).resolve() for end in STORE_COMPANIONS} | {
        lock_path(store).resolve()
    }


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _release_at_or_above(path: Path) -> Path | None:
    for folder in (path, *path.parents):
        if is_release(folder):
            return folder
    return None


def check_output(
    out: Path,
    *,
    option: str,
    folder: bool,
    stores: Iterable[Path] = (),
    inputs: Iterable[Path] = (),
    replaces_release: bool = False,
) -> None:
    """Refuse ``out`` (given as ``option``) when writing it could destroy data.

    ``folder``: the output is a folder (a report, a release, an export folder), else a file.
    ``stores``: run store files the command has open; ``inputs``: what it reads;
    ``replaces_release``: ``out`` may be an earlier release it replaces (``release build``).
    """
    path = Path(out).resolve()
    shown = f"{option} {out}"
    if not folder:
        if path.is_dir():
            raise OutputRefused(f"{shown} is a folder; give a file name")
        name = path.name
        if (
            name == STORE_FILENAME
            or name.endswith(tuple(STORE_SUFFIX + end for end in STORE_COMPANIONS))
            or is_sqlite_file(path)
        ):
            raise OutputRefused(f"{shown} is a run store (or its lock or journal); choose a file")
    for store in stores:
        store = Path(store).resolve()
        if path in _store_files(store):
            raise OutputRefused(f"{shown} would overwrite the run store {store}; choose a file")
        if folder and _inside(store, path):
            raise OutputRefused(f"{shown} holds the run store {store}; choose a folder of its own")
    release = _release_at_or_above(path)
    if release is not None and not (replaces_release and release == path):
        raise OutputRefused(
            f"{shown} is inside the release {release}, which is read-only; choose a folder "
            "outside it"
        )
    for given in inputs:
        source = Path(given).resolve()
        if _inside(path, source):
            where = "is" if path == source else "is inside"
            raise OutputRefused(f"{shown} {where} the input {given}; choose another path")
        if folder and _inside(source, path):
            raise OutputRefused(f"{shown} holds the input {given}; choose a folder of its own")
