"""Bytes worked out once and kept on disk between processes, in the user's cache folder.

Each cache has its folder (``medrealmm/NAME`` in ``$XDG_CACHE_HOME`` or ``~/.cache``) and an
environment variable that moves it (``off`` turns it off). A file is named by its key and the
sha256 of its content, checked on every read: a truncated or damaged file is made again,
never used. A folder that cannot be written leaves the bytes in memory, as without a cache.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def cache_folder(env: str, name: str) -> Path | None:
    """The folder ``env`` names, else ``medrealmm/name`` in the user's cache; None when off."""
    chosen = os.environ.get(env)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "0", "no") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "medrealmm" / name


def kept(folder: Path | None, key: str, suffix: str, make: Callable[[], bytes]) -> bytes:
    """``make()``, read from ``folder`` when an earlier process made it under ``key``."""
    if folder is None:
        return make()
    for path in folder.glob(f"{key}.*.{suffix}") if folder.is_dir() else ():
        try:
            data = path.read_bytes()
            if path.name == _name(key, data, suffix):
                return data
            path.unlink()  # damaged: made again below
        except OSError:
            continue
    data = make()
    _store(folder / _name(key, data, suffix), data)
    return data


def _store(target: Path, data: bytes) -> None:
    """Write ``data`` whole or not at all (a reader never sees half a file)."""
    tmp: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
    except OSError:  # read-only or full: the bytes stay in memory, as without a cache
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _name(key: str, data: bytes, suffix: str) -> str:
    return f"{key}.{hashlib.sha256(data).hexdigest()[:32]}.{suffix}"
