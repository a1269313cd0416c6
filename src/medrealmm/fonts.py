"""Find a CJK font for figures and generated images; Chinese glyphs need one."""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

FONT_ENV = "MEDREALMM_CJK_FONT"

_KNOWN = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/System/Library/Fonts/PingFang.ttc",
    "C:/Windows/Fonts/msyh.ttc",
)


class MissingFontError(RuntimeError):
    pass


@cache
def find_cjk_font() -> Path | None:
    env = os.environ.get(FONT_ENV)
    if env and Path(env).is_file():
        return Path(env)
    for candidate in _KNOWN:
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


def require_cjk_font() -> Path:
    font = find_cjk_font()
    if font is None:
        raise MissingFontError(
            "no CJK font found: install one (Debian: apt-get install fonts-noto-cjk) "
            f"or point {FONT_ENV} at a .ttf/.otf/.ttc file"
        )
    return font
