"""Edited ONNX models (``onnx_fold``, ``onnx_lengths``) kept on disk between processes.

Each edit takes a tenth of a second, but importing the ``onnx`` package it needs costs about
a CPU-second per process (every run, every worker). The edited bytes depend only on the
model's bytes, the editing module's source and the ``onnx`` version, so the first process
stores them under a key of all three and later ones read them back without importing
``onnx``: the same bytes, so the same sessions and the same readings.

The folder is ``MEDREALMM_MODEL_CACHE`` when set (``off`` turns the cache off), else
``medrealmm/models`` in the user's cache folder. A file is named by its key and the sha256 of
its content, checked on every read: a truncated or damaged file is made again, never used.
A folder that cannot be written leaves the edit to be made in memory, as without a cache.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

CACHE_ENV = "MEDREALMM_MODEL_CACHE"


def cache_dir() -> Path | None:
    """Where edited models are kept; None when the cache is turned off."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "0", "no") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "medrealmm" / "models"


def _recipe(edit: Callable[[bytes], bytes]) -> bytes:
    """What an edit's output depends on besides the model: its module's source, onnx's version."""
    module = sys.modules[edit.__module__]
    source = Path(module.__file__ or "").read_bytes()
    try:
        version = metadata.version("onnx")
    except metadata.PackageNotFoundError:  # pragma: no cover - onnx is a dependency
        version = "none"
    return source + b"\0" + edit.__qualname__.encode() + b"\0" + version.encode()


def edited(model: bytes, edit: Callable[[bytes], bytes]) -> bytes:
    """``edit(model)``, read from the cache when an earlier process made it."""
    folder = cache_dir()
    if folder is None:
        return edit(model)
    key = hashlib.sha256(
        hashlib.sha256(model).digest() + hashlib.sha256(_recipe(edit)).digest()
    ).hexdigest()[:32]
    for path in folder.glob(f"{key}.*.onnx") if folder.is_dir() else ():
        try:
            data = path.read_bytes()
            if path.name == _name(key, data):
                return data
            path.unlink()  # damaged: made again below
        except OSError:
            continue
    data = edit(model)
    _store(folder / _name(key, data), data)
    return data


def _store(target: Path, data: bytes) -> None:
    """Write ``data`` whole or not at all (a reader never sees half a model)."""
    tmp: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
    except OSError:  # read-only or full: the edit stays in memory, as without a cache
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _name(key: str, data: bytes) -> str:
    return f"{key}.{hashlib.sha256(data).hexdigest()[:32]}.onnx"
