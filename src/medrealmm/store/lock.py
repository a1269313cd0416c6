"""One writer per run store: a second process that would run stages gets a clear refusal
naming the holder, instead of both redoing the same work.

An advisory ``flock`` on ``<store>.lock`` (released by the OS when the holder dies, so a
``kill -9`` leaves no stale lock); the file records who holds it. Re-entrant within a process,
so code that opens the same store twice does not lock itself out.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from datetime import UTC, datetime
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, the store is unguarded
    fcntl = None  # type: ignore[assignment]

_held: dict[Path, tuple[int, int]] = {}  # lock path -> (fd, how many holders here)
_guard = threading.Lock()


class StoreLockedError(ValueError):
    """Another process holds the run store's writer lock."""


def lock_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".lock")


def holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        return f"pid {info['pid']} on {info['host']} since {info['since']}"
    except (OSError, ValueError, KeyError):
        return "another process"


def acquire(store_path: Path) -> Path:
    path = lock_path(store_path).resolve()
    with _guard:
        if path in _held:
            fd, count = _held[path]
            _held[path] = (fd, count + 1)
            return path
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise StoreLockedError(
                    f"run store {store_path} is in use by {holder(path)}; wait for that run to "
                    "finish (or stop it) and run again: finished work is kept"
                ) from None
        since = datetime.now(UTC).isoformat(timespec="seconds")
        info = {"pid": os.getpid(), "host": socket.gethostname(), "since": since}
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(info).encode("utf-8"))
        _held[path] = (fd, 1)
        return path


def release(path: Path) -> None:
    with _guard:
        fd, count = _held[path]
        if count > 1:
            _held[path] = (fd, count - 1)
            return
        del _held[path]
        os.ftruncate(fd, 0)
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
