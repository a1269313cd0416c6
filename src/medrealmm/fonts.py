"""Find a CJK font for figures and generated images; Chinese glyphs need one.

The font comes with the install: the ``noto-cjk-sans-otc`` dependency ships Noto Sans CJK
(SIL OFL 1.1) inside its wheel, so no system package is needed. Order: the file named by
``MEDREALMM_CJK_FONT``, the packaged font, then fonts the system has.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

from medrealmm.assets import verified

FONT_ENV = "MEDREALMM_CJK_FONT"
FONT_PACKAGE = "noto-cjk-sans-otc"

_SYSTEM_FONTS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/System/Library/Fonts/PingFang.ttc",
    "C:/Windows/Fonts/msyh.ttc",
)


class MissingFontError(RuntimeError):
    pass


def _configured_font() -> Path | None:
    value = os.environ.get(FONT_ENV)
    if not value:
        return None
    if not Path(value).is_file():
        raise MissingFontError(f"{FONT_ENV}={value} is not a font file")
    return Path(value)


def packaged_font() -> Path | None:
    """The font file inside the ``noto-cjk-sans-otc`` wheel, if it is installed."""
    try:
        from noto_cjk_sans_otc import FONT_PATH
    except ImportError:
        return None
    path = Path(str(FONT_PATH))
    return verified(FONT_PACKAGE, path) if path.is_file() else None


def system_font() -> Path | None:
    for candidate in _SYSTEM_FONTS:
        if Path(candidate).is_file():
            return Path(candidate)
    if shutil.which("fc-list"):
        out = subprocess.run(
            ["fc-list", ":lang=zh", "file"], capture_output=True, text=True, check=False
        ).stdout
        for line in sorted(out.splitlines()):
            path = Path(line.split(":")[0].strip())
            if path.is_file():
                return path
    return None


@cache
def find_cjk_font() -> Path | None:
    return _configured_font() or packaged_font() or system_font()


def require_cjk_font() -> Path:
    font = find_cjk_font()
    if font is None:
        raise MissingFontError(
            f"no CJK font found: reinstall medrealmm (it depends on {FONT_PACKAGE}), "
            f"pip install {FONT_PACKAGE}, or point {FONT_ENV} at a .ttf/.otf/.ttc file"
        )
    return font
