"""A full disk is one line naming where and how much room to make, never a traceback.

SQLite answers a full disk with ``database or disk is full`` (its transaction rolled back, the
file intact) and a write with ``OSError`` 28 (``atomic_writer`` removes its temp file, so the
old file stays whole). Either way the finished work is kept and the same command resumes it;
what the user needs is the place and the room. ``RunStore`` registers the database files it
has open (``opened``, ``closed``), so a SQLite error, which names no file, can be pinned on one.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

#: Room asked for at least: a stage's transaction, its journal and a release's staging copy.
MIN_FREE_BYTES = 256 * 1024 * 1024
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_SQLITE_FULL = "database or disk is full"

_open_databases: list[Path] = []
_recent: list[Path] = []


def opened(path: Path) -> None:
    """``path`` is a database this process opened: the latest still open names a SQLite
    error, or else the latest opened (the error reaches the CLI after its store closed)."""
    _open_databases.append(path)
    _recent[:] = [*(p for p in _recent if p != path), path][-8:]


def closed(path: Path) -> None:
    if path in _open_databases:
        _open_databases.remove(path)


def is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError):
        return exc.errno in _FULL_ERRNOS
    return isinstance(exc, sqlite3.Error) and _SQLITE_FULL in str(exc)


def disk_full_message(exc: BaseException) -> str:
    """Where the disk filled, what is free there, and at least how much to free."""
    path = _where(exc)
    free = shutil.disk_usage(_existing(path)).free
    held = path.stat().st_size if path.is_file() else 0
    need = max(MIN_FREE_BYTES, 2 * held)  # a database's rewrite needs room for its journal
    return (
        f"disk full writing {path}: {_size(free)} free there; free at least {_size(need)} on "
        "that disk and run the same command again (finished work is kept, nothing was left "
        "half written)"
    )


def _where(exc: BaseException) -> Path:
    if isinstance(exc, OSError) and exc.filename:
        return Path(os.fsdecode(exc.filename))
    if _open_databases:
        return _open_databases[-1]
    return _recent[-1] if _recent else Path.cwd()


def _existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path.cwd()


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"  # pragma: no cover
