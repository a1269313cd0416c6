"""One writer per run store: a second process that would run stages gets a clear refusal
naming the holder, instead of both redoing the same work.

An advisory ``flock`` on ``<store>.lock``, released by the OS when the holder dies; the file
records who holds it (pid, host, wall-clock start of the hold and the process's own start
time). Two things could still keep a dead run's lock: a child forked while the lock was held
shares the lock's open file, and a child that outlives its parent keeps it. So forked children
close the lock at once (``os.register_at_fork``), and a lock whose recorded holder is gone
(same host; its pid dead, or reused by a process that started at another time) is taken over
with a warning naming the old holder. Re-entrant within a process, so code that opens the
same store twice does not lock itself out.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, the store is unguarded
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("medrealmm.store")

_held: dict[Path, tuple[int, int]] = {}  # lock path -> (fd, how many holders here)
_guard = threading.Lock()


class StoreLockedError(ValueError):
    """Another process holds the run store's writer lock."""


def lock_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".lock")


def process_start(pid: int) -> str | None:
    """When ``pid`` started, in clock ticks since boot (Linux ``/proc``); ``None`` when the
    process does not exist or this system does not say. A pid reused by a later process has
    another start time."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # the command name may hold spaces
    return fields[19] if len(fields) > 19 else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


def _read(path: Path) -> dict[str, Any]:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def describe(info: dict[str, Any]) -> str:
    try:
        return f"pid {info['pid']} on {info['host']} since {info['since']}"
    except KeyError:
        return "another process"


def holder(path: Path) -> str:
    return describe(_read(path))


def holder_gone(info: dict[str, Any]) -> bool:
    """The recorded holder ran on this host and no longer runs: its pid is dead, or now
    belongs to a process that started at another time. Unknown holders are never gone."""
    pid = info.get("pid")
    if not isinstance(pid, int) or info.get("host") != socket.gethostname():
        return False
    if not _alive(pid):
        return True
    started = info.get("started")
    now = process_start(pid)
    return started is not None and now is not None and now != started


def _try_flock(fd: int) -> bool:
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _same_file(fd: int, path: Path) -> bool:
    """Still the lock file at ``path`` (a takeover replaces it with a new one)."""
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


def _take(path: Path) -> int | None:
    """Open and lock the file at ``path``; ``None`` when a live process holds it."""
    for _ in range(5):  # a concurrent takeover may swap the file under us; try the new one
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if not _try_flock(fd):
            os.close(fd)
            return None
        if _same_file(fd, path):
            return fd
        os.close(fd)
    return None


def _take_over(path: Path, info: dict[str, Any]) -> None:
    """Put a fresh lock file in place of one a dead holder's orphans keep locked. Serialised
    by a second lock file, so two processes never both replace it."""
    guard = os.open(path.with_name(path.name + ".takeover"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(guard, fcntl.LOCK_EX)
        if _read(path) == info:  # nobody replaced it meanwhile
            log.warning(
                "run store lock %s was held by %s (process start %s), which is gone; "
                "taking it over",
                path,
                describe(info),
                info.get("started", "unknown"),
            )
            os.unlink(path)
    finally:
        os.close(guard)


def acquire(store_path: Path) -> Path:
    path = lock_path(store_path).resolve()
    with _guard:
        if path in _held:
            fd, count = _held[path]
            _held[path] = (fd, count + 1)
            return path
        taken = _take(path)
        if taken is None:
            info = _read(path)
            if holder_gone(info):
                _take_over(path, info)
                taken = _take(path)
        if taken is None:
            raise StoreLockedError(
                f"run store {store_path} is in use by {holder(path)}; wait for that run to "
                "finish (or stop it) and run again: finished work is kept"
            )
        since = datetime.now(UTC).isoformat(timespec="seconds")
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": since,
            "started": process_start(os.getpid()),
        }
        os.ftruncate(taken, 0)
        os.pwrite(taken, json.dumps(info).encode("utf-8"), 0)
        _held[path] = (taken, 1)
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


def _forget_in_child() -> None:
    """A forked child (a worker of a process pool) must not keep its parent's lock: closing
    its copy leaves the parent's hold as it is, and the lock goes when the parent goes."""
    global _guard
    for fd, _count in _held.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _held.clear()
    _guard = threading.Lock()  # the parent's may have been held by another thread at fork


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
