"""Edited ONNX models (``onnx_fold``, ``onnx_lengths``) kept on disk between processes.

Each edit takes a tenth of a second, but importing the ``onnx`` package it needs costs about
a CPU-second per process (every run, every worker). The edited bytes depend only on the
model's bytes, the editing module's source and the ``onnx`` version, so the first process
stores them under a key of all three and later ones read them back without importing
``onnx``: the same bytes, so the same sessions and the same readings.

The folder is ``MEDREALMM_MODEL_CACHE`` when set (``off`` turns the cache off), else
``medrealmm/models`` in the user's cache folder (``disk_cache``, which checks every read).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from medrealmm.disk_cache import cache_folder, kept

CACHE_ENV = "MEDREALMM_MODEL_CACHE"


def cache_dir() -> Path | None:
    """Where edited models are kept; None when the cache is turned off."""
    return cache_folder(CACHE_ENV, "models")


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
    return kept(folder, key, "onnx", lambda: edit(model))
