"""Where browser tests find Debian's Chromium and how they start it headless offline.

The background-networking flags matter: without them Chromium keeps dialling hosts a
closed network refuses.
"""

from __future__ import annotations

import shutil
from pathlib import Path

CHROMIUM = Path(shutil.which("chromium") or "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
