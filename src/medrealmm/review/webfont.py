"""The review app's own CJK font, so a machine without one (a kiosk, a container, a fresh
Linux desktop) shows Chinese rather than boxes.

The pages' CSP allows fonts from the app only, so the font is a route, not an inlined data
URL as in the report. One fixed subset serves every page, so the browser fetches it once and
keeps it: the 3755 common characters (GB2312 level 1, over 99.9% of modern running text), its
punctuation and symbol rows, ASCII, and every character the app's own templates and messages
use. A rarer character in a case falls back to the system's fonts. The subset is cut with
the report's ``medrealmm.report.webfont`` (same font, same disk cache) on first request.
"""

from __future__ import annotations

import string
import threading
from functools import cache
from importlib import resources

from medrealmm.fonts import find_cjk_font
from medrealmm.report.webfont import FAMILY, cached_subset

__all__ = ["FAMILY", "common_characters", "font_bytes"]

_LOCK = threading.Lock()


def _gb2312_rows(first: int, last: int) -> set[str]:
    found = set()
    for high in range(first, last + 1):
        for low in range(0xA1, 0xFF):
            try:
                found.add(bytes([high, low]).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    return found


@cache
def common_characters() -> str:
    """The subset's characters, sorted (the disk cache's key holds them)."""
    chars = set(string.printable.strip()) | {" "}
    chars |= _gb2312_rows(0xA1, 0xA9)  # punctuation, full-width forms, symbols
    chars |= _gb2312_rows(0xB0, 0xD7)  # level 1 hanzi
    package = resources.files("medrealmm.review")
    for folder in (package, package / "templates", package / "routes"):
        for item in folder.iterdir():
            if item.name.endswith((".py", ".html")):
                chars |= set(item.read_text(encoding="utf-8"))
    return "".join(sorted(c for c in chars if c.isprintable()))


@cache
def _cut() -> bytes | None:
    path = find_cjk_font()
    return None if path is None else cached_subset(path, common_characters())


def font_bytes() -> bytes | None:
    """The WOFF subset, or None when no CJK font is installed; cut once per process (and
    kept on disk), even when many first requests arrive together."""
    with _LOCK:
        return _cut()
