"""ONNX Runtime stays offline: its official wheels (1.29 on) ship telemetry that, some seconds
after the first session, looks up and posts to a Microsoft host from a background thread. The
de-identification models run on un-masked patient data, where nothing may resolve a name or
open a connection, so every process turns it off before its first session."""

from __future__ import annotations

import os

#: Read by ONNX Runtime once, when its environment is created (the first session of a process);
#: "1" creates no uploader, device id or offline cache and sends nothing.
TELEMETRY_OFF = ("ORT_DISABLE_TELEMETRY", "1")


def offline_onnxruntime() -> None:
    """Call before the process's first ONNX Runtime session (worker processes included)."""
    name, value = TELEMETRY_OFF
    os.environ[name] = value
