"""The report page's own CJK font: a subset of the packaged font, embedded in the page.

The figures are drawn with the font that comes with the install, but the HTML's text was left to
the reader's system fonts, so on a machine without a CJK font every Chinese character showed as
a box. The page now carries a WOFF subset (fontTools, which matplotlib already depends on) of
just the characters it uses: tens to hundreds of KB instead of the 19 MB collection.
"""

from __future__ import annotations

import base64
import io
import warnings
from pathlib import Path

from medrealmm.fonts import find_cjk_font

#: The family name the page's CSS asks for first.
FAMILY = "MedRealMM CJK"
#: Face of a collection to use: Simplified Chinese, as the page is ``zh-CN``.
PREFERRED_FACE = "CJK SC"


def _open_face(path: Path):  # -> fontTools.ttLib.TTFont
    from fontTools.ttLib import TTCollection, TTFont

    if path.read_bytes()[:4] != b"ttcf":
        return TTFont(path, lazy=True)
    faces = TTCollection(path, lazy=True).fonts
    names = [face["name"].getDebugName(4) or "" for face in faces]
    index = next((i for i, name in enumerate(names) if PREFERRED_FACE in name), 0)
    return TTFont(path, fontNumber=index, lazy=True)


def subset_woff(path: Path, text: str) -> bytes:
    """The font at ``path`` (a collection's Simplified Chinese face) cut down to ``text``'s
    characters, as WOFF."""
    from fontTools import subset

    font = _open_face(path)
    # The head table keeps the whole face's bounding box (a browser lays text out by the
    # glyphs' own metrics): recomputing it runs every kept outline, a third of the subset's cost.
    font.recalcBBoxes = False
    # Keep the face's own modified time: a save-time stamp would make two builds of the same
    # report differ in three bytes.
    font.recalcTimestamp = False
    options = subset.Options()
    options.flavor = "woff"
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=text)
    subsetter.subset(font)
    buffer = io.BytesIO()
    font.save(buffer)
    return buffer.getvalue()


def font_face_css(text: str) -> str:
    """An ``@font-face`` rule with the subset for ``text`` inlined, or '' with one warning
    when no CJK font is installed or it cannot be subset (the page then uses system fonts)."""
    path = find_cjk_font()
    if path is None:
        return ""  # the figures have already warned that no CJK font was found
    try:
        data = subset_woff(path, text)
    except Exception as exc:  # a configured font fontTools cannot read: the page still renders
        warnings.warn(
            f"could not embed {path.name} in the report page ({type(exc).__name__}); "
            "its Chinese text relies on the reader's fonts",
            stacklevel=2,
        )
        return ""
    encoded = base64.b64encode(data).decode("ascii")
    return (
        f'@font-face {{ font-family: "{FAMILY}"; font-display: block; '
        f'src: url(data:font/woff;base64,{encoded}) format("woff"); }}'
    )
