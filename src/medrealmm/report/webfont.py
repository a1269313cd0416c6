"""The report page's own CJK font: a subset of the packaged font, embedded in the page.

The figures are drawn with the font that comes with the install, but the HTML's text was left to
the reader's system fonts, so on a machine without a CJK font every Chinese character showed as
a box. The page now carries a WOFF subset (fontTools, which matplotlib already depends on) of
just the characters it uses: tens to hundreds of KB instead of the 19 MB collection.

Cutting the subset costs about half a CPU-second, the same for every report with the same
characters (one benchmark's reports share them), so it is kept on disk (``disk_cache``) under
the font file's sha256, the characters, this module's source and fontTools' version:
``MEDREALMM_FONT_CACHE`` moves the folder (``medrealmm/fonts`` in the user's cache), ``off``
turns it off. A subset read back is the bytes it was cut as.
"""

from __future__ import annotations

import base64
import hashlib
import io
import warnings
from importlib import metadata
from pathlib import Path

from medrealmm.assets import file_sha256
from medrealmm.disk_cache import cache_folder, kept
from medrealmm.fonts import find_cjk_font

#: The family name the page's CSS asks for first.
FAMILY = "MedRealMM CJK"
#: Face of a collection to use: Simplified Chinese, as the page is ``zh-CN``.
PREFERRED_FACE = "CJK SC"
CACHE_ENV = "MEDREALMM_FONT_CACHE"


def _open_face(path: Path):  # -> fontTools.ttLib.TTFont
    from fontTools.ttLib import TTCollection, TTFont

    with path.open("rb") as handle:  # the tag, not the 19 MB collection
        collection = handle.read(4) == b"ttcf"
    if not collection:
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
    font.flavor = options.flavor  # the options' flavor alone still saves a bare OpenType file
    buffer = io.BytesIO()
    font.save(buffer)
    return buffer.getvalue()


def cached_subset(path: Path, text: str) -> bytes:
    """``subset_woff(path, text)``, read back when an earlier process cut the same one."""
    folder = cache_folder(CACHE_ENV, "fonts")
    if folder is None:
        return subset_woff(path, text)
    recipe = [file_sha256(path), text, Path(__file__).read_text(encoding="utf-8")]
    recipe.append(metadata.version("fonttools"))
    key = hashlib.sha256("\0".join(recipe).encode()).hexdigest()[:32]
    return kept(folder, key, "woff", lambda: subset_woff(path, text))


def font_face_css(text: str) -> str:
    """An ``@font-face`` rule with the subset for ``text`` inlined, or '' with one warning
    when no CJK font is installed or it cannot be subset (the page then uses system fonts)."""
    path = find_cjk_font()
    if path is None:
        return ""  # the figures have already warned that no CJK font was found
    try:
        data = cached_subset(path, text)
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
