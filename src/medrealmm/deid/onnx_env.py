"""ONNX Runtime stays offline: its official wheels (1.29 on) ship telemetry that, some seconds
after the first session, looks up and posts to a Microsoft host from a background thread. The
de-identification models run on un-masked patient data, where nothing may resolve a name or
open a connection, so every process turns it off before it imports onnxruntime."""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger(__name__)

#: Read by ONNX Runtime when the module is imported (not at the first session, and
#: ``onnxruntime.disable_telemetry_events()`` does not stop it on Linux): "1" creates no
#: uploader, device id or offline cache and sends nothing.
TELEMETRY_OFF = ("ORT_DISABLE_TELEMETRY", "1")


def offline_onnxruntime() -> None:
    """Call before the process imports onnxruntime (worker processes included). Where
    something imported it earlier with its telemetry on, say so: it can no longer be
    turned off in this process."""
    name, value = TELEMETRY_OFF
    if "onnxruntime" in sys.modules and os.environ.get(name) != value:
        log.warning(
            "onnxruntime was imported before %s=%s was set: its telemetry may contact a "
            "Microsoft host from this process; set it in the environment before starting",
            name,
            value,
        )
    os.environ[name] = value
