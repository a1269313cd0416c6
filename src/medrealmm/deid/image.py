"""Image de-identification: re-encode without metadata, then cover every identifying region
with a solid black rectangle (never a blur, which can be reversed or read through).

Regions come from independent detectors, each recorded with its box: OCR text whose content
the text recognizers flag, values next to identifying labels (signatures), QR codes and
barcodes, coloured logos and stamps on documents, all burnt-in text on dark film photos,
and faces when a face detector is available.
"""

from __future__ import annotations

import io
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from medrealmm.deid.image_fit import fit_to_ink
from medrealmm.deid.image_labels import (
    FILLER,
    bare_label,
    column,
    continuation,
    header_row,
    inline_values,
    institution_span,
    page_angle,
    starts_with_label,
    trailing_label,
    value_line,
    wrapped,
)
from medrealmm.deid.names import AFTER_TITLES
from medrealmm.deid.near_miss import near_misses
from medrealmm.deid.ocr import LEGIBLE, OcrLine, read_page, turn_points
from medrealmm.deid.record import Box, ImageBox
from medrealmm.deid.text import find_spans, screen_spans

FACE_MODEL_ENV = "MEDREALMM_FACE_MODEL"
SIGNATURE_LABELS = ("签名", "签字", "检验者", "审核者", "报告者", "报告医生", "医师", "操作者")
# A flagged line's box is grown by this fraction of its height on every side.
PAD = 0.25


@dataclass
class MaskResult:
    image: np.ndarray
    boxes: list[ImageBox] = field(default_factory=list)
    face_detector: str = "unavailable"
    needs_review: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: OCR text left unmasked that the text near-miss finder flags (not blacked).
    near_misses: list[ImageBox] = field(default_factory=list)


class ImageTooLargeError(ValueError):
    """An image over the pixel cap: refused before decoding, recorded as that unit's failure
    (never masked partially, never copied through unmasked)."""


def load_without_metadata(path: Path | str, max_pixels: int | None = None) -> np.ndarray:
    """Pixels only (EXIF orientation applied first): metadata cannot survive a pixel copy.

    The size is read from the header first: an image over ``max_pixels`` (default: the
    dataset cap, ``MEDREALMM_MAX_PIXELS``) raises :class:`ImageTooLargeError` undecoded."""
    from medrealmm.io.dataset import DEFAULT_MAX_PIXELS

    cap = DEFAULT_MAX_PIXELS if max_pixels is None else max_pixels
    name = Path(path).name
    try:
        with Image.open(path) as img:
            width, height = img.size
            if width * height > cap:
                raise ImageTooLargeError(
                    f"image {name} is {width}x{height} = {width * height / 1e6:.1f} Mpx, over "
                    f"the {cap / 1e6:.1f} Mpx cap (MEDREALMM_MAX_PIXELS); not masked"
                )
            img = ImageOps.exif_transpose(img)
            return np.array(img.convert("RGB"))
    except Image.DecompressionBombError as exc:
        raise ImageTooLargeError(f"image {name}: {exc}; not masked") from None


def encode_clean(rgb: np.ndarray, suffix: str) -> bytes:
    """A fresh encode of the pixels: no EXIF, XMP, ICC or text chunks."""
    img = Image.fromarray(rgb)
    buffer = io.BytesIO()
    if suffix.lower() in (".jpg", ".jpeg"):
        img.save(buffer, format="JPEG", quality=92)
    else:
        img.save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()


# -- geometry --------------------------------------------------------------------------
def _clip(box: Box, width: int, height: int) -> Box:
    x0, y0, x1, y1 = box
    return (max(0, x0), max(0, y0), min(width, x1), min(height, y1))


def _pad(box: Box, by: int) -> Box:
    return (box[0] - by, box[1] - by, box[2] + by, box[3] + by)


def _overlap(a: Box, b: Box) -> int:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(0, w) * max(0, h)


def _area(box: Box) -> int:
    return max(0, box[2] - box[0]) * max(0, box[3] - box[1])


# OCR reads full-width brackets as their ASCII forms: as a line's first or last
# character they still take a Han glyph's width on the page.
_WIDE_ASCII = frozenset("()[]")


def _char_weight(char: str) -> float:
    return 0.55 if ord(char) < 0x2E80 and char not in _WIDE_ASCII else 1.0


# Half a glyph's width and the margin beyond it, as fractions of the line's height, around
# where the recognizer placed a character: a Han glyph is up to 0.9 of the detector's line
# height wide, and the decoded centre strays up to ~0.2 of it (drawn lines, 14-30 px).
HALF_GLYPH = 0.45
GLYPH_MARGIN = 0.3


def _along(
    line: OcrLine, start: int, end: int, length: float, height: float
) -> tuple[float, float]:
    """Where characters ``[start, end)`` begin and end along a line ``length`` long: at the
    recognizer's own character positions when it gave them, else by estimated glyph widths
    with one glyph of margin each side (widths are estimated, coverage must not be)."""
    centres = line.centres
    if centres is not None and len(centres) == len(line.text) and end > start:
        first, last = line.text[start], line.text[end - 1]
        left = centres[start] * length - (HALF_GLYPH * _char_weight(first) + GLYPH_MARGIN) * height
        right = (
            centres[end - 1] * length + (HALF_GLYPH * _char_weight(last) + GLYPH_MARGIN) * height
        )
        return left, right
    weights = [_char_weight(c) for c in line.text] or [1.0]
    total = sum(weights)
    glyph = height * 0.6
    left = length * sum(weights[:start]) / total - glyph
    right = length * sum(weights[:end]) / total + glyph
    return left, right


def sub_box(line: OcrLine, start: int, end: int) -> Box:
    """The part of a line's box holding characters ``[start, end)``."""
    x0, y0, x1, y1 = line.box
    left, right = _along(line, start, end, x1 - x0, y1 - y0)
    pad = int((y1 - y0) * PAD)
    return (int(x0 + left), y0 - pad, int(x0 + right + 0.5), y1 + pad)


# Below this tilt (degrees) the axis-aligned box is tight enough and is used as is.
MIN_TILT = 3.0


# An axis-aligned box this much taller than the line itself spills onto the lines around it.
MAX_SPILL = 1.25


def _tilted(line: OcrLine) -> bool:
    """Tilted enough that the quad is tighter than the box: by the angle, or on a long line
    (a keystoned page) by the height a small angle adds along its length."""
    if line.quad is None:
        return False
    (ax, ay), (bx, by) = line.quad[0], line.quad[1]
    if abs(np.degrees(np.arctan2(by - ay, bx - ax))) >= MIN_TILT:
        return True
    _, height = _quad_size(line)
    return line.box[3] - line.box[1] > MAX_SPILL * height


def text_box(line: OcrLine, start: int, end: int, kind: str, label: str | None) -> ImageBox:
    """Characters ``[start, end)`` of a line: an axis-aligned box on level text, the matching
    slice of the detector's quad on tilted text (its hull would black the lines around it)."""
    if not _tilted(line):
        return ImageBox(kind=kind, box=sub_box(line, start, end), label=label)
    length, height = _quad_size(line)
    left, right = _along(line, start, end, length, height)
    return _slice(line, left, right, height * PAD, kind, label)


def _quad_size(line: OcrLine) -> tuple[float, float]:
    assert line.quad is not None
    (ax, ay), (bx, by), _, (dx, dy) = line.quad[:4]
    return float(np.hypot(bx - ax, by - ay)) or 1.0, float(np.hypot(dx - ax, dy - ay)) or 1.0


def _slice(
    line: OcrLine, left: float, right: float, pad: float, kind: str, label: str | None = None
) -> ImageBox:
    """The band of a tilted line's quad from ``left`` to ``right`` pixels along its baseline,
    grown by ``pad`` above and below."""
    assert line.quad is not None
    tl, tr, _, bl = (np.array(p, dtype=float) for p in line.quad[:4])
    length, height = _quad_size(line)
    u, n = (tr - tl) / length, (bl - tl) / height
    corners = [
        tl + u * left - n * pad,
        tl + u * right - n * pad,
        tl + u * right + n * (height + pad),
        tl + u * left + n * (height + pad),
    ]
    polygon = [(round(float(p[0])), round(float(p[1]))) for p in corners]
    xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
    box = (min(xs), min(ys), max(xs) + 1, max(ys) + 1)
    return ImageBox(kind=kind, box=box, label=label, polygon=polygon)


# -- text regions ----------------------------------------------------------------------
def _rows(lines: list[OcrLine]) -> list[list[OcrLine]]:
    """Group lines whose vertical centres fall within one another's extent."""
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda item: (item.box[1] + item.box[3]) / 2):
        centre = (line.box[1] + line.box[3]) / 2
        for row in rows:
            ref = row[0].box
            if ref[1] <= centre <= ref[3]:
                row.append(line)
                break
        else:
            rows.append([line])
    return [sorted(row, key=lambda item: item.box[0]) for row in rows]


# A surname and the title after it (莫主任, 王女士) name one person: on a page the title is
# masked with the name (the text recognizers mark the surname alone).
_TITLE = re.compile(f"(?:{AFTER_TITLES})")
# A Latin label glued to its value (ID:657666748, No.4567, MRN#12) is one printed token:
# the value's mask starts at the label, so no stub of the token is left beside it.
_GLUED_LABEL = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{1,5}[.:：#]?$")


def glued_label_start(text: str, start: int) -> int:
    """Where the token holding ``text[start]`` begins, when a Latin label opens it."""
    found = _GLUED_LABEL.search(text, 0, start)
    if found is None or not text[start : start + 1].isdigit():
        return start
    return found.start()


# The top of a page (a fraction of the text's extent) where its header prints the patient's
# name, ID and date as separate fields.
HEADER_BAND = 0.2


def flagged_text_boxes(lines: list[OcrLine]) -> list[ImageBox]:
    """Read each row as one string (label and value may be separate OCR boxes), run the text
    recognizers, and map every span back onto the boxes it came from. A row of several boxes
    is also read box by box: a table's cells and a header's fields are separate values, and
    read as one sentence a name beside an ID number reads as words of it."""
    found: dict[tuple[int, int, int], str] = {}
    header_band = HEADER_BAND * max((line.box[3] for line in lines), default=0)
    for row in _rows(lines):
        whole = _flagged_spans(row)
        for index, lo, hi, label in whole:
            found.setdefault((id(row[index]), lo, hi), label)
        if len(row) == 1:
            continue
        for line in row:
            for _, lo, hi, label in _flagged_spans([line]):
                # A cell alone has no context: a name read there counts only in a page's
                # header beside another identifier (a drug or vaccine cell of a table row
                # may read as a name alone).
                if label == "NAME" and not (whole and row[0].box[1] <= header_band):
                    continue
                found.setdefault((id(line), lo, hi), label)
    by_id = {id(line): line for line in lines}
    return [text_box(by_id[key], lo, hi, "text", label) for (key, lo, hi), label in found.items()]


def _joined_row(row: list[OcrLine]) -> tuple[str, list[tuple[int, OcrLine]]]:
    """A row's boxes read as one string (a blank between boxes), with each box's offset in it."""
    joined = ""
    offsets: list[tuple[int, OcrLine]] = []
    for line in row:
        if joined:
            joined += " "
        offsets.append((len(joined), line))
        joined += line.text
    return joined, offsets


def _flagged_spans(row: list[OcrLine]) -> list[tuple[int, int, int, str]]:
    """(line index, start, end, type) of each recognizer span in ``row`` read as one string."""
    joined, offsets = _joined_row(row)
    out: list[tuple[int, int, int, str]] = []
    for span in find_spans(joined):
        start, end = glued_label_start(joined, span.start), span.end
        if span.type.value == "NAME":
            title = _TITLE.match(joined, end)
            end = title.end() if title else end
        for index, (offset, line) in enumerate(offsets):
            lo = max(start, offset) - offset
            hi = min(end, offset + len(line.text)) - offset
            if hi > lo:
                out.append((index, lo, hi, span.type.value))
    return out


def place_title_boxes(lines: list[OcrLine]) -> list[ImageBox]:
    """The place's name over its address in a shared location (a map app's or a chat's
    location card, a shop's page): a larger line right above a line that is an address,
    flush with it. The name is a landmark or a building no recognizer knows by name."""
    out: list[ImageBox] = []
    for line in lines:
        height = max(1, line.box[3] - line.box[1])
        names = [
            above
            for above in lines
            if above is not line
            and -0.2 * height <= line.box[1] - above.box[3] <= 1.2 * height
            and abs(above.box[0] - line.box[0]) <= height
            and above.box[3] - above.box[1] >= 1.1 * height
            and 2 <= len(above.text.strip()) <= 24
            and not above.text.rstrip().endswith(_SENTENCE_END)
            and not starts_with_label(above.text)
        ]
        if not names:
            continue  # the layout first: the recognizers only where it fits
        text = line.text.strip()
        spans = [span for span in find_spans(text) if span.type.value == "ADDRESS"]
        if text and sum(span.end - span.start for span in spans) >= 0.5 * len(text):
            out += [text_box(above, 0, len(above.text), "place", "ADDRESS") for above in names]
    return out


_SENTENCE_END = ("，", ",", "。", "；", "：", ":", "！", "？")


def near_miss_boxes(lines: list[OcrLine], masked: Sequence[ImageBox]) -> list[ImageBox]:
    """OCR text left on the image that the text pass's near-miss finder flags (a veto's drop,
    the model's own drop, an unknown proper noun): outlined for the reviewer, never blacked.
    ``label`` says why (the veto class, ``model`` or ``proper_noun``); a stretch mostly under
    a mask already is left out."""
    out: list[ImageBox] = []
    for row in _rows(lines):
        joined, offsets = _joined_row(row)
        kept, dropped = screen_spans(joined)
        for suspect in near_misses(joined, kept, dropped):
            for offset, line in offsets:
                lo = max(suspect.start, offset) - offset
                hi = min(suspect.end, offset + len(line.text)) - offset
                if hi > lo:
                    item = text_box(line, lo, hi, "near_miss", suspect.reason or suspect.kind)
                    covered = sum(_overlap(item.box, box.box) for box in masked)
                    if covered < 0.5 * max(1, _area(item.box)):
                        out.append(item)
    return out


# "...号：" (门诊号, 住院号, 病案号 ...) is a record number whatever OCR made of the words
# before it (门诊号 read as 内诊号 is still a number field).
NUMBERED_FIELD = re.compile(r"号\s*[:：]?\s*([A-Za-z]{0,3}\d[\dA-Za-z-]{5,})")


def numbered_field_boxes(lines: list[OcrLine]) -> list[ImageBox]:
    return [
        text_box(line, match.start(1), match.end(1), "text", "ID")
        for line in lines
        for match in NUMBERED_FIELD.finditer(line.text)
    ]


def labelled_boxes(
    lines: list[OcrLine], unread: Sequence[OcrLine] = (), gray: np.ndarray | None = None
) -> list[ImageBox]:
    """Values a form's identifying labels name (deid.image_labels), on the label's line, in
    the cell to its right or on the line below, and letterhead institution names.

    A value OCR could not read (``unread``: hand-writing, a smudge) is masked as a read one
    is; a label with no value box at all has the ink right of it masked (``gray``), when
    there is ink there (a scribble the detector missed)."""
    out: list[ImageBox] = []
    angle = page_angle(lines)
    # What OCR guessed for an unread box is noise (often blank or a dash): it counts as one
    # value whatever it says.
    unread = [replace(item, text="?" * max(1, len(item.text.strip()))) for item in unread]
    pool = [*lines, *unread]
    for line in lines:
        values = inline_values(line)
        tail: OcrLine | None = line if values and values[-1][1] == len(line.text) else None
        for start, end in values:
            out.append(text_box(line, glued_label_start(line.text, start), end, "field", None))
        bare = bare_label(line)
        if bare or trailing_label(line):
            tail = value_line(line, pool, angle, below_too=bare)
            if tail is not None:
                # Under a table's header the whole column is values (a vaccination
                # record's dates); under a card's label a value wraps at most twice.
                under = _below(line, tail)
                if under and header_row(line, lines, angle):
                    more = column(tail, pool, angle)
                else:
                    more = wrapped(tail, pool, angle)
                for part in [tail, *more]:
                    label = "illegible" if part in unread else None
                    out.append(text_box(part, 0, len(part.text), "field", label))
            elif gray is not None:
                out += _ink_after(gray, line, pool)
        # A value that runs to the end of its box may go on in the next box of the row.
        for more in continuation(tail, pool, angle) if tail is not None else []:
            label = "illegible" if more in unread else None
            out.append(text_box(more, 0, len(more.text), "field", label))
        found = institution_span(line)
        if found is not None:
            out.append(text_box(line, *found, "field", "HOSPITAL"))
    return out


def _below(label: OcrLine, value: OcrLine) -> bool:
    """``value`` lies under ``label`` rather than beside it."""
    return (value.box[1] + value.box[3]) / 2 > label.box[3]


# Ink is this much darker than the paper (grey levels), and covers this share of the value's
# place, for a label's empty-looking value to count as written.
INK_CONTRAST = 60
INK_SHARE = 0.02


def _ink_after(gray: np.ndarray, line: OcrLine, pool: Sequence[OcrLine]) -> list[ImageBox]:
    """The place of a label's value right of it on a level line (up to eight line heights,
    or the next box of the row), masked when ink is there that OCR found no line in."""
    if _tilted(line):
        return []
    x0, y0, x1, y1 = line.box
    h = max(1, y1 - y0)
    right = min(gray.shape[1], x1 + 8 * h)
    for other in pool:
        o_mid = (other.box[1] + other.box[3]) / 2
        if other is not line and y0 <= o_mid <= y1 and other.box[0] >= x1 - h // 2:
            right = min(right, other.box[0])
    top, bottom = max(0, y0 - h // 4), min(gray.shape[0], y1 + h // 4)
    # OCR may swallow the scribble into the label's box (read as ^ or ~): the value's place
    # starts where the label and its colon end, not where the box does.
    label_end = len(line.text.rstrip(FILLER))
    colon = label_end + (line.text[label_end : label_end + 1] in (":", "："))
    start = min(gray.shape[1], max(x0, int(x0 + _along(line, 0, colon, x1 - x0, h)[1])))
    if right - start < h:
        return []
    place = gray[top:bottom, start:right].astype(np.int16)
    paper = int(np.median(gray[top:bottom, max(0, x0 - h) : right]))
    ink = paper - place > INK_CONTRAST
    # A table's rules run through a cell from side to side: they are not a value.
    ink[ink.mean(axis=1) > 0.6, :] = False
    ink[:, ink.mean(axis=0) > 0.6] = False
    if float(np.mean(ink)) < INK_SHARE:
        return []
    return [ImageBox(kind="field", box=(start, top, right, bottom), label="illegible")]


def signature_boxes(lines: list[OcrLine], width: int) -> list[ImageBox]:
    """Handwriting OCR cannot read sits right of labels such as 检验者： or 医师签名：."""
    out: list[ImageBox] = []
    for line in lines:
        ends = [
            line.text.find(label) + len(label) for label in SIGNATURE_LABELS if label in line.text
        ]
        if not ends:
            continue
        label_end = max(ends)
        rest = line.text[label_end:].strip(":：～~^-_ ")
        if rest.isalnum() and (len(rest) >= 4 or not rest.isascii()):
            continue  # a readable value follows (OCR reads a scribble as a stray letter or two)
        x0, y0, x1, y1 = line.box
        h = y1 - y0
        # OCR may swallow the scribble into the label's box: start where the label's
        # glyphs end (estimated from the line height), not where the box does.
        # A glyph is at most ~0.6 of the box height wide; erring short only blacks the colon.
        glyphs = sum(_char_weight(c) for c in line.text[:label_end])
        start = min(x1, x0 + int(glyphs * 0.5 * h))
        end = max(x1 + h, start + 8 * h)
        if _tilted(line):
            length, height = _quad_size(line)
            left = glyphs * 0.5 * height
            right = max(length + height, left + 8 * height)
            out.append(_slice(line, left, right, height * 0.6, "signature"))
            continue
        out.append(
            ImageBox(
                kind="signature",
                box=(start, y0 - int(h * 0.6), min(width, end), y1 + int(h * 0.6)),
            )
        )
    return out


# A phone's status bar: the clock at the top of the screen.
_STATUS_CLOCK = re.compile(r"^\s*(?:[上下]午)?\d{1,2}:\d{2}\s*$")
# Page titles an app prints in its navigation bar; any other title there names the person or
# the group the chat is with (a nickname no recognizer knows: 小雨妈妈, Sunny).
_APP_TITLE = re.compile(
    r"报告|详情|記錄|记录|问诊|咨询|諮詢|消息|设置|首页|订单|处方|病历|檢查|检查|检验|結果|结果|聊天信息"
    r"|通讯录|发现|朋友圈|支付|账单|门诊|住院|挂号|预约|缴费|搜索|微信|图片|视频|文件|相册|健康|我的"
)


def chat_title_boxes(lines: list[OcrLine], width: int, height: int) -> list[ImageBox]:
    """The navigation-bar title of a phone screenshot: centred under the status bar's clock.
    In a chat it is the other side's name or nickname, which the text recognizers read as an
    ordinary word; an app's own page titles are kept."""
    clocks = [
        line for line in lines if line.box[3] <= 0.06 * height and _STATUS_CLOCK.match(line.text)
    ]
    if not clocks:
        return []
    floor = max(line.box[3] for line in clocks)
    titles = [
        line
        for line in lines
        if floor <= line.box[1] <= floor + 0.06 * height
        and abs((line.box[0] + line.box[2]) / 2 - width / 2) <= 0.08 * width
        and line.box[2] - line.box[0] <= 0.7 * width
    ]
    if not titles:
        return []
    title = min(titles, key=lambda line: line.box[1])  # the bar's, not a centred notice's
    if _APP_TITLE.search(title.text):
        return []
    return [text_box(title, 0, len(title.text), "title", "NAME")]


# A photo with fewer text lines than this is a picture of a person or a lesion, not a page.
PHOTO_LINES = 3
_LATIN_TAG = re.compile(r"[A-Za-z][A-Za-z.'-]*(?:\s+[A-Za-z][A-Za-z.'-]*)+")


def latin_tag_boxes(gray: np.ndarray, lines: list[OcrLine]) -> list[ImageBox]:
    """Words in Latin letters on a photo of a person (a name badge, a caption): two words or
    more, nothing but letters, and not a scanner's settings. On a photo that is not a page
    there is no form to say what they are, and a name in Latin letters need not be pinyin."""
    out: list[ImageBox] = []
    for line in lines:
        text = line.text.strip()
        letters = sum(char.isascii() and char.isalpha() for char in text)
        if letters < 4 or not _LATIN_TAG.fullmatch(text) or _acquisition(text):
            continue
        out.append(_plate(gray, line))
    return out


def _plate(gray: np.ndarray, line: OcrLine) -> ImageBox:
    """The badge a line of words is printed on: the area of the paper's shade around it
    (badges carry a logo or a rank beside the name), at most a line's width and height
    further out each way; the line's own box when no plate stands out."""
    import cv2

    x0, y0, x1, y1 = line.box
    w, h = x1 - x0, y1 - y0
    height, width = gray.shape
    wx0, wy0 = max(0, x0 - w), max(0, y0 - h)
    wx1, wy1 = min(width, x1 + w), min(height, y1 + h)
    window = gray[wy0:wy1, wx0:wx1].astype(np.int16)
    shade = int(np.median(gray[y0:y1, x0:x1]))
    alike = (np.abs(window - shade) < 30).astype(np.uint8)
    size = max(3, h // 2) | 1
    alike = cv2.morphologyEx(alike, cv2.MORPH_CLOSE, np.ones((size, size), np.uint8))
    _, labels, stats, _ = cv2.connectedComponentsWithStats(alike)
    inside = labels[y0 - wy0 : y1 - wy0, x0 - wx0 : x1 - wx0]
    ids, votes = np.unique(inside[inside > 0], return_counts=True)
    box = (x0, y0, x1, y1)
    if len(ids):
        px, py, pw, ph, _ = (int(v) for v in stats[int(ids[np.argmax(votes)])])
        touches = px == 0 or py == 0 or px + pw >= wx1 - wx0 or py + ph >= wy1 - wy0
        if not touches:  # the plate ends inside the window: not the jacket or the wall
            box = (
                min(x0, wx0 + px),
                min(y0, wy0 + py),
                max(x1, wx0 + px + pw),
                max(y1, wy0 + py + ph),
            )
    return ImageBox(kind="tag", box=_pad(box, max(3, h // 8)), label="NAME")


# -- codes, logos, faces ---------------------------------------------------------------
CODE_ANGLES = (15.0, -15.0, 30.0, -30.0, 45.0)


def _decode(rgb: np.ndarray) -> list[tuple[str, np.ndarray]]:
    import cv2
    import zxingcpp

    found = []
    for code in zxingcpp.read_barcodes(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)):
        p = code.position
        corners = [p.top_left, p.top_right, p.bottom_right, p.bottom_left]
        kind = "qr" if "QR" in str(code.format) else "barcode"
        found.append((kind, np.array([[c.x, c.y] for c in corners], dtype=float)))
    return found


def _rotate(rgb: np.ndarray, angle: float) -> tuple[np.ndarray, np.ndarray]:
    """``rgb`` turned by ``angle`` on a canvas that holds all of it, and the inverse map."""
    import cv2

    h, w = rgb.shape[:2]
    matrix = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    cos, sin = abs(matrix[0, 0]), abs(matrix[0, 1])
    nw, nh = int(h * sin + w * cos), int(h * cos + w * sin)
    matrix[0, 2] += nw / 2 - w / 2
    matrix[1, 2] += nh / 2 - h / 2
    turned = cv2.warpAffine(rgb, matrix, (nw, nh), borderValue=(255, 255, 255))
    return turned, cv2.invertAffineTransform(matrix)


def code_boxes(rgb: np.ndarray, angles: Sequence[float] = CODE_ANGLES) -> list[ImageBox]:
    """Decoded QR codes and barcodes. zxing only tries right-angle turns, so a photo tilted
    by a few tens of degrees is also read turned back by each of ``angles`` (the masker
    passes the tilt of the page's text: a code printed on it is tilted alike)."""
    found = _decode(rgb)
    if not found:
        for angle in angles:
            turned, inverse = _rotate(rgb, angle)
            for kind, pts in _decode(turned):
                back = np.hstack([pts, np.ones((4, 1))]) @ inverse.T
                found.append((kind, back))
            if found:
                break
    out: list[ImageBox] = []
    for kind, pts in found:
        xs, ys = pts[:, 0], pts[:, 1]
        # A 1-D decode may report a thin line through the bars: grow across it to the bars.
        span = max(float(xs.max() - xs.min()), float(ys.max() - ys.min()))
        margin = int(max(4, span / 10 if kind == "qr" else span / 4))
        box = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
        # A QR code's corners are exact: its box, grown by a module or so, with the quiet
        # zone. A 1-D code's decode is a line: the symbol's traced outline when there is one
        # (the decode's grown box on a tilted photo is mostly the arm or table around it).
        symbol = _symbol_polygon(rgb, pts, span) if kind == "barcode" else None
        if symbol is not None:
            out.append(symbol)
        else:
            out.append(ImageBox(kind=kind, box=_pad(box, margin)))
    return out


def _symbol_polygon(rgb: np.ndarray, pts: np.ndarray, span: float) -> ImageBox | None:
    """The whole symbol around a decoded position, as a turned rectangle: on a tilted photo
    zxing reads a 1-D code along a diagonal, and its line says little about the bars' extent.
    The dark modules near the decode, closed into one block, give the symbol's outline."""
    import cv2

    height, width = rgb.shape[:2]
    x0, y0, x1, y1 = _clip(
        _pad(
            (
                int(pts[:, 0].min()),
                int(pts[:, 1].min()),
                int(pts[:, 0].max()),
                int(pts[:, 1].max()),
            ),
            int(span / 2),
        ),
        width,
        height,
    )
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    gray = cv2.cvtColor(np.ascontiguousarray(rgb[y0:y1, x0:x1]), cv2.COLOR_RGB2GRAY)
    _, dark = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    gap = max(3, int(span / 40))  # about a wide space between bars
    block = cv2.morphologyEx(dark, cv2.MORPH_CLOSE, np.ones((2 * gap + 1, 2 * gap + 1), np.uint8))
    count, labels = cv2.connectedComponents(block)
    centre = pts.mean(axis=0) - (x0, y0)
    cx = int(np.clip(centre[0], 0, x1 - x0 - 1))
    cy = int(np.clip(centre[1], 0, y1 - y0 - 1))
    target = labels[cy, cx]
    if count < 2 or target == 0:
        return None
    ys, xs = np.nonzero(labels == target)
    (rcx, rcy), (rw, rh), angle = cv2.minAreaRect(np.column_stack([xs, ys]).astype(np.float32))
    if rw * rh > 4 * span * span:  # merged with the page's text: keep the decode's box
        return None
    # Along the bars' run, the quiet zone too (ten modules, about a tenth of the decode each
    # side): the light bars at either end close into the block last.
    quiet = span / 10
    rw, rh = (rw + 2 * quiet, rh) if rw >= rh else (rw, rh + 2 * quiet)
    corners = cv2.boxPoints(((rcx + x0, rcy + y0), (rw + 2 * gap, rh + 2 * gap), angle))
    polygon = [(round(float(x)), round(float(y))) for x, y in corners]
    px, py = [p[0] for p in polygon], [p[1] for p in polygon]
    return ImageBox(
        kind="barcode", box=(min(px), min(py), max(px) + 1, max(py) + 1), polygon=polygon
    )


def barcode_like_boxes(
    gray: np.ndarray, text: list[OcrLine], decoded: list[ImageBox] | None = None
) -> list[ImageBox]:
    """Undecodable 1-D barcodes: dense vertical strokes with no horizontal ones, away from
    any text OCR read (digits have vertical strokes too, and lab values must survive) and
    from codes already decoded. Each is covered by its turned rectangle: a wristband's
    code is rarely level, and its axis-aligned box is mostly arm."""
    import cv2

    gx = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=-1)
    gy = cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=-1)
    grad = cv2.convertScaleAbs(cv2.subtract(np.abs(gx), np.abs(gy)))
    grad = cv2.blur(grad, (9, 9))
    _, binary = cv2.threshold(grad, 150, 255, cv2.THRESH_BINARY)
    binary = cv2.morphologyEx(
        binary, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (21, 7))
    )
    binary = cv2.dilate(cv2.erode(binary, None, iterations=2), None, iterations=4)
    contours, _ = cv2.findContours(binary, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out: list[ImageBox] = []
    for contour in contours:
        x, y, w, h = cv2.boundingRect(contour)
        box = (x, y, x + w, y + h)
        if w < 40 or h < 20 or w * h < 2000:
            continue
        if any(_overlap(box, line.box) > 0.2 * _area(box) for line in text):
            continue
        if any(_overlap(box, code.box) > 0.5 * _area(box) for code in decoded or []):
            continue
        vertical = float(np.abs(gx[y : y + h, x : x + w]).sum())
        horizontal = float(np.abs(gy[y : y + h, x : x + w]).sum()) + 1.0
        if vertical / horizontal < 3.0:  # bars: edges across, none along
            continue
        (cx, cy), (rw, rh), angle = cv2.minAreaRect(contour)
        # The quiet zone at either end of the bars (a tenth of the run each side) belongs to
        # the symbol; a photo's perspective also leans its ends off the traced rectangle.
        quiet = 0.1 * max(rw, rh)
        rw, rh = (rw + 2 * quiet, rh) if rw >= rh else (rw, rh + 2 * quiet)
        corners = cv2.boxPoints(((cx, cy), (rw + 20, rh + 20), angle))
        polygon = [(round(float(px)), round(float(py))) for px, py in corners]
        xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
        out.append(
            ImageBox(
                kind="barcode",
                box=(min(xs), min(ys), max(xs) + 1, max(ys) + 1),
                polygon=polygon,
            )
        )
    return out


MAX_MARK_FRACTION = 0.15
# Where a logo may sit (fraction of the page height): the letterhead.
LOGO_BAND = 0.18


def colour_mark_boxes(rgb: np.ndarray, text: list[OcrLine]) -> list[ImageBox]:
    """Stamps (red or orange, compact and roughly round or square, anywhere) and logos
    (any colour, compact, in the letterhead). Thin strokes are ink, not marks; large filled
    rounded rectangles are chat bubbles or table shading: both are content."""
    import cv2

    hsv = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV)
    ink = (hsv[:, :, 1] > 90) & (hsv[:, :, 2] > 40)
    red = ink & ((hsv[:, :, 0] <= 22) | (hsv[:, :, 0] >= 165))
    height = rgb.shape[0]
    page = rgb.shape[0] * rgb.shape[1]
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (9, 9))
    out: list[ImageBox] = []
    for mask, stamp in ((red, True), (ink & ~red, False)):
        raw = mask.astype(np.uint8) * 255
        grown = cv2.dilate(raw, kernel)
        count, _, stats, _ = cv2.connectedComponentsWithStats(grown)
        for i in range(1, count):
            x, y, w, h, area = (int(v) for v in stats[i])
            if area < 300 or w < 15 or h < 15 or w * h > MAX_MARK_FRACTION * page:
                continue
            if not 0.4 <= w / h <= 2.5:
                continue  # a line of handwriting or a banner, not a stamp or logo
            if not stamp and y + h > LOGO_BAND * height:
                continue
            if not stamp and _written(_pad((x, y, x + w, y + h), -4), text):
                continue  # coloured words OCR read (handwriting): the text rules judge them
            solid = float(np.mean(raw[y : y + h, x : x + w] > 0))
            if solid > (0.6 if stamp else 0.85):
                continue  # a filled block (bubble, highlight), not a mark
            edge = x == 0 or y == 0 or x + w >= rgb.shape[1] or y + h >= height
            if edge and solid > 0.35:
                continue  # the table or wall round a photographed page, not a ring of ink
            # Ink strokes are thin: few pixels survive an erosion by a stroke half-width.
            thick = cv2.erode(raw[y : y + h, x : x + w], np.ones((3, 3), np.uint8))
            if not stamp and float(np.mean(thick > 0)) < 0.02:
                continue
            out.append(ImageBox(kind="logo", box=_pad((x, y, x + w, y + h), 3)))
    return out


def letterhead_mark_boxes(gray: np.ndarray, lines: list[OcrLine]) -> list[ImageBox]:
    """A logo beside the institution's name in the letterhead, in any colour or none (a
    pale or grey emblem a colour test misses): a compact blot of ink, not text OCR read,
    about the name's height or a few times it, within a few heights of the name's ends."""
    import cv2

    height, width = gray.shape
    out: list[ImageBox] = []
    for line in lines:
        x0, y0, x1, y1 = line.box
        if y1 > LOGO_BAND * height or institution_span(line) is None:
            continue
        h = max(1, round(_quad_size(line)[1]) if line.quad is not None else y1 - y0)
        middle = (y0 + y1) // 2
        for lo, hi in ((x0 - 4 * h, x0), (x1, x1 + 4 * h)):
            wx0, wx1 = max(0, lo), min(width, hi)
            wy0, wy1 = max(0, middle - 2 * h), min(height, middle + 2 * h)
            if wx1 - wx0 < h or wy1 - wy0 < h:
                continue
            window = gray[wy0:wy1, wx0:wx1].astype(np.int16)
            ink = (np.abs(window - int(np.median(window))) > MARK_CONTRAST).astype(np.uint8)
            ink = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
            ink = cv2.dilate(ink, np.ones((5, 5), np.uint8))
            count, _, stats, _ = cv2.connectedComponentsWithStats(ink)
            for i in range(1, count):
                x, y, w, hh, _ = (int(v) for v in stats[i])
                if not (0.8 * h <= w <= 4 * h and 0.8 * h <= hh <= 4 * h and w <= 2.5 * hh):
                    continue
                if x == 0 or y == 0 or x + w >= wx1 - wx0 or y + hh >= wy1 - wy0:
                    continue  # runs on out of the window: the page's edge, a rule, a table
                box = (wx0 + x, wy0 + y, wx0 + x + w, wy0 + y + hh)
                if any(_overlap(box, other.box) > 0.2 * _area(box) for other in lines):
                    continue
                out.append(ImageBox(kind="logo", box=_pad(box, 3)))
    return out


# A letterhead emblem differs from the paper by this many grey levels (a pale print on a
# low-contrast scan still does; JPEG noise stays under it).
MARK_CONTRAST = 14


def _written(box: Box, text: list[OcrLine]) -> bool:
    """Most of ``box`` lies on OCR lines that read as words (two Han characters or more)."""
    words = [line.box for line in text if sum("\u4e00" <= c <= "\u9fff" for c in line.text) >= 2]
    return sum(_overlap(box, line) for line in words) >= 0.6 * max(1, _area(box))


# Detectors not in use. OpenCV's detectors keep per-call scratch state, and one shared by the
# image threads fails inside OpenCV (getScaleData assertions), so each call borrows one; a
# process makes as many as it masks images at once (loading the cascade costs ~0.08 CPU-s),
# not one for every thread an executor ever started (six in the demo).
_IDLE_FACES: list[tuple[str, object | None]] = []
_FACES_LOCK = threading.Lock()


@contextmanager
def _borrowed_face_backend() -> Iterator[tuple[str, object | None]]:
    with _FACES_LOCK:
        backend = _IDLE_FACES.pop() if _IDLE_FACES else None
    if backend is None:
        backend = _new_face_backend()
    try:
        yield backend
    finally:
        with _FACES_LOCK:
            _IDLE_FACES.append(backend)


def face_backend() -> tuple[str, object | None]:
    """Haar cascade where OpenCV still ships one; else a YuNet model named by
    ``MEDREALMM_FACE_MODEL``; else none (and photos are flagged for manual review).

    For its name: the detector returned is back in the pool, and ``face_boxes`` borrows one
    for each call."""
    with _borrowed_face_backend() as backend:
        return backend


def _new_face_backend() -> tuple[str, object | None]:
    import cv2

    cascade_dir = getattr(getattr(cv2, "data", None), "haarcascades", "")
    cascade_file = Path(cascade_dir) / "haarcascade_frontalface_default.xml"
    if hasattr(cv2, "CascadeClassifier") and cascade_file.is_file():
        return "opencv-haar", cv2.CascadeClassifier(str(cascade_file))
    model = os.environ.get(FACE_MODEL_ENV)
    if model and Path(model).is_file() and hasattr(cv2, "FaceDetectorYN"):
        return "opencv-yunet", cv2.FaceDetectorYN.create(model, "", (320, 320))
    return "unavailable", None


# Faces are looked for on a copy at most this many pixels on its long side: the cascade's
# cost grows with the pixels, and a face under ~50 px in a 1080 px photo identifies no one.
FACE_SIDE = 960


# Margins added to a detected face (fractions of its width or height): each side, above, below.
# A detector's box runs from the brows to the lips; the hair, the forehead and the ears
# identify too, so the mask covers the head: a third of the box above it, a sixth each side.
FACE_MARGIN = (0.17, 0.35, 0.2)


def face_boxes(rgb: np.ndarray) -> tuple[str, list[ImageBox]]:

    with _borrowed_face_backend() as (name, detector):
        return _faces_with(name, detector, rgb)


def _faces_with(name: str, detector: object | None, rgb: np.ndarray) -> tuple[str, list[ImageBox]]:
    import cv2

    if detector is None:
        return name, []
    height, width = rgb.shape[:2]
    scale = min(1.0, FACE_SIDE / max(height, width))
    if scale < 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        rgb = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    found: Iterable[tuple[int, int, int, int]]
    if name == "opencv-haar":
        gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
        found = detector.detectMultiScale(gray, scaleFactor=1.1, minNeighbors=5)  # type: ignore[attr-defined]
    else:
        bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
        detector.setInputSize((bgr.shape[1], bgr.shape[0]))  # type: ignore[attr-defined]
        _, faces = detector.detect(bgr)  # type: ignore[attr-defined]
        found = [tuple(int(v) for v in face[:4]) for face in (faces if faces is not None else [])]
    boxes = []
    for x, y, w, h in found:
        # A detector's face box runs from the brow to the lips: the chin and jaw lie below
        # it, the forehead and hair above it.
        side, top, bottom = FACE_MARGIN
        box = (
            (x - side * w) / scale,
            (y - top * h) / scale,
            (x + w + side * w) / scale,
            (y + h + bottom * h) / scale,
        )
        boxes.append(ImageBox(kind="face", box=tuple(round(v) for v in box)))  # type: ignore[arg-type]
    return name, boxes


# A badge is paler than this grey level, and this much paler than what it is pinned on.
BADGE_SHADE = 120
BADGE_CONTRAST = 40


def badge_boxes(gray: np.ndarray, faces: Sequence[ImageBox]) -> list[ImageBox]:
    """Name badges worn under a face: a pale, filled rectangle two to six times as wide as
    tall, with dark marks on it (letters, an emblem), on the chest within a few face heights.
    Its words are often too small for OCR to find (a few pixels high in a portrait), and a
    badge names its wearer whatever it says."""
    import cv2

    height, width = gray.shape
    out: list[ImageBox] = []
    for face in faces:
        fx0, fy0, fx1, fy1 = face.box
        fw, fh = max(1, fx1 - fx0), max(1, fy1 - fy0)
        x0, x1 = max(0, fx0 - fw), min(width, fx1 + fw)
        y0, y1 = max(0, fy1), min(height, fy1 + 3 * fh)
        if x1 - x0 < 8 or y1 - y0 < 8:
            continue
        window = gray[y0:y1, x0:x1]
        pale = (window > BADGE_SHADE).astype(np.uint8)
        pale = cv2.morphologyEx(pale, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
        count, _, stats, _ = cv2.connectedComponentsWithStats(pale)
        for i in range(1, count):
            x, y, w, h, area = (int(v) for v in stats[i])
            if not (2.0 <= w / max(1, h) <= 6.0 and 0.06 * fh <= h <= 0.5 * fh):
                continue
            if area < 0.7 * w * h:
                continue  # not a filled plate: a collar, a shirt's edge
            plate = window[y : y + h, x : x + w].astype(np.int16)
            shade = int(np.median(plate))
            marks = float(np.mean(plate < shade - 50))
            if not 0.03 <= marks <= 0.4:
                continue  # blank (a dressing, a sticker) or mostly dark
            ring = gray[
                max(0, y0 + y - h // 2) : y0 + y + h + h // 2,
                max(0, x0 + x - h // 2) : x0 + x + w + h // 2,
            ]
            if float(np.median(ring)) > shade - BADGE_CONTRAST:
                continue  # not worn on something darker: part of a pale shirt or the wall
            box = (x0 + x, y0 + y, x0 + x + w, y0 + y + h)
            out.append(ImageBox(kind="tag", box=_pad(box, max(3, h // 6)), label="NAME"))
    return out


# -- the masker ------------------------------------------------------------------------
def kind_cues(gray: np.ndarray, rgb: np.ndarray, lines: list[OcrLine] | None) -> dict[str, float]:
    """Independent cues the class is voted from, each a fraction of the image."""
    import cv2

    hsv = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV)
    grey = hsv[:, :, 1] < 40
    h, s, v = hsv[:, :, 0], hsv[:, :, 1], hsv[:, :, 2]
    skin = (h <= 25) & (s >= 40) & (s <= 200) & (v >= 60)
    # Flat: a pixel identical to its right and lower neighbours (rendered UI, not a camera).
    flat = (gray[:-1, :-1] == gray[1:, :-1]) & (gray[:-1, :-1] == gray[:-1, 1:])
    page = float(gray.size)
    # OCR reads a glyph or two into eyes and textures: text is a line of several characters.
    lines = [
        line
        for line in lines or []
        if len(line.text.strip()) >= 2 and line.box[3] - line.box[1] <= 0.15 * gray.shape[0]
    ]
    text_area = sum(_area(line.box) for line in lines) / page
    return {
        "grey": float(np.mean(grey)),
        "dark": float(np.mean(gray < 60)),
        "bright": float(np.mean(gray > 170)),
        "skin": float(np.mean(skin)),
        "flat": float(np.mean(flat)),
        "text": text_area,
        "lines": float(len(lines)),
    }


def image_kind(
    gray: np.ndarray, rgb: np.ndarray | None = None, lines: list[OcrLine] | None = None
) -> str:
    """photo, document, film or screenshot, from several cues together: a dark portrait is
    not a film (it has colour), a skin photo on a pale sheet is not a document (no text)."""
    if rgb is None:
        rgb = np.repeat(gray[:, :, None], 3, axis=2)
    cue = kind_cues(gray, rgb, lines)
    has_text = lines is None or cue["lines"] >= 3 or cue["text"] >= 0.02
    # A dark-themed app screen is as dark and grey as a film, but text fills it: a film's
    # burnt-in text is a few corner lines over an image.
    text_dense = cue["text"] >= 0.06 and cue["lines"] >= 10
    if cue["dark"] >= 0.45 and cue["grey"] >= 0.9 and cue["skin"] < 0.05 and not text_dense:
        return "film"
    if cue["flat"] >= 0.6 and has_text and cue["skin"] < 0.15:
        return "screenshot"  # rendered pixels: no sensor noise, no JPEG of a camera
    if cue["bright"] >= 0.45 and cue["grey"] >= 0.6 and cue["skin"] < 0.2 and has_text:
        return "document"
    return "photo"


# Overlay text that names a field is an identifier wherever it sits on a film.
FIELD_LABEL = re.compile(
    r"(姓名|name|pat|id\b|id[:：]|dob|birth|出生|性别|sex|年龄|\bage\b|住院|门诊|病历|检查号|mrn|acc"
    r"|医院|hosp|clinic|中心|日期|date|时间|time|\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}:\d{2})",
    re.IGNORECASE,
)
# Measurement callouts and acquisition settings: clinical, kept.
MEASUREMENT = re.compile(
    r"(\d\s*(mm|cm|ms|hz|khz|mhz|bpm|db|ml|%|°|m/s|cm/s|mmhg|cm2|cm²|mm2|mm²|hu|s\b)"
    r"|^\s*(hr|ef|d\d|dist|area|vol|ti[bs]?|mi|gn|fr|depth)\b)",
    re.IGNORECASE,
)


# What a scanner prints beside the image about how it was taken and where the slice lies:
# clinical, kept. Label-value pairs (W:1500 L:-600, Se:3 Im:45), values with units (120kV,
# 5mm), sequence and plane names (T2WI AX, FLAIR SAG) and orientation letters (R, L).
ACQUISITION = re.compile(
    r"(?<![A-Za-z])(?:WW|WL|W|L|C|Se|Ser|Series|Im|Img|Image|Sl|Slice|Zoom|Z|FOV|TR|TE|TI|ST"
    r"|Thk|THK|Fr|Frame|Mag)\s*[:：=]?\s*-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?"
    r"|-?\d+(?:\.\d+)?\s*(?:kVp|kV|mAs|mA|mm|cm|ms|s|%|°|Hz|x)(?![A-Za-z])"
    r"|(?<![A-Za-z])(?:T1\w*|T2\w*|FLAIR|DWI|ADC|STIR|SWI|PDW?I?|AX|SAG|COR|TRA|MPR|MIP|VR|CE"
    r"|[RLAPHFS])(?![a-z])",
    re.IGNORECASE,
)


def _acquisition(text: str) -> bool:
    """Nothing but acquisition settings, measurements and orientation letters."""
    rest = ACQUISITION.sub(" ", text)
    rest = MEASUREMENT.sub(" ", rest)
    return not re.search(r"[0-9A-Za-z\u4e00-\u9fff]", rest)


def film_overlay_boxes(lines: list[OcrLine], width: int, height: int) -> list[ImageBox]:
    """Burnt-in text on films: labelled fields and anything the recognizers flag go
    everywhere; other text goes in the border bands where scanners print patient data;
    the image's own annotations (measurements, acquisition settings, slice numbers,
    orientation letters) stay wherever they are unless they also carry a label."""
    flagged = flagged_text_boxes(lines)
    out = [item.model_copy(update={"kind": "overlay"}) for item in flagged]
    for line in lines:
        x = (line.box[0] + line.box[2]) / 2 / max(1, width)
        y = (line.box[1] + line.box[3]) / 2 / max(1, height)
        labelled = bool(FIELD_LABEL.search(line.text))
        border = not (0.25 <= x <= 0.75 and 0.15 <= y <= 0.85)
        clinical = bool(MEASUREMENT.search(line.text)) or _acquisition(line.text)
        if labelled or (border and not clinical):
            out.append(text_box(line, 0, len(line.text), "overlay", None))
    return out


def mask_image(rgb: np.ndarray) -> MaskResult:
    """Find identifying regions in ``rgb`` and return a copy with each one blacked out.

    A page photographed sideways or upside down is masked in the frame where OCR found its
    text upright, then turned back: the masks follow the lines, not the image's axes."""
    started = time.perf_counter()
    page = read_page(rgb)
    if page.turns == 0:
        result = _mask_upright(rgb, page.lines, page.unread)
    else:
        upright = np.ascontiguousarray(np.rot90(rgb, page.turns))
        result = _mask_upright(upright, page.lines, page.unread)
        back = 4 - page.turns
        height, width = upright.shape[:2]
        result.image = np.ascontiguousarray(np.rot90(result.image, back))
        result.boxes = [_turn_box(item, back, width, height) for item in result.boxes]
        result.near_misses = [_turn_box(item, back, width, height) for item in result.near_misses]
    result.seconds = time.perf_counter() - started
    return result


def _turn_box(item: ImageBox, turns: int, width: int, height: int) -> ImageBox:
    """``item`` of a ``width`` x ``height`` image, placed in ``np.rot90(image, turns)``."""
    x0, y0, x1, y1 = item.box
    corners = item.polygon or [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    pts = turn_points(np.array(corners, dtype=np.float32), turns, width, height)
    xs, ys = pts[:, 0], pts[:, 1]
    box = (int(xs.min()), int(ys.min()), int(np.ceil(xs.max())), int(np.ceil(ys.max())))
    polygon = [(round(float(x)), round(float(y))) for x, y in pts] if item.polygon else None
    return item.model_copy(update={"box": box, "polygon": polygon})


def _mask_upright(
    rgb: np.ndarray, lines: list[OcrLine], unread: Sequence[OcrLine] = ()
) -> MaskResult:
    """The masker on a page whose text stands upright, given what OCR read on it (and the
    text regions it could not read)."""
    import cv2

    height, width = rgb.shape[:2]
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    kind = image_kind(gray, rgb, lines)
    boxes: list[ImageBox] = []
    if kind == "film":
        boxes += film_overlay_boxes(lines, width, height)
    else:
        boxes += flagged_text_boxes(lines)
        boxes += numbered_field_boxes(lines)
        boxes += labelled_boxes(lines, unread, gray)
        boxes += place_title_boxes(lines)
    if kind == "screenshot":
        boxes += chat_title_boxes(lines, width, height)
    if kind == "photo" and sum(len(line.text.strip()) >= 2 for line in lines) < PHOTO_LINES:
        boxes += latin_tag_boxes(gray, lines)
    # Text masks were placed from estimates with generous margins: shrink each to its ink
    # (a badge's plate is measured already). A film's overlay only across its line: it
    # stands alone on the dark border, where a margin along it covers no neighbour, and a
    # glyph's side bearing (卜, 川) leaves its cell's edge well outside the ink.
    boxes = [
        item if item.kind == "tag" else fit_to_ink(gray, item, PAD, item.kind != "overlay")
        for item in boxes
    ]
    if kind != "film":
        boxes += signature_boxes(lines, width)
    # Codes on a tilted page are read turned back by the text's tilt (both ways: a code
    # may face either way); a level page or one with no text is read as it is.
    tilt = float(np.degrees(page_angle(lines))) if lines else 0.0
    codes = code_boxes(rgb, (tilt, -tilt) if abs(tilt) >= MIN_TILT else ())
    boxes += codes
    # A rendered report is as flat as a screenshot; a photographed one is a photo with text.
    if kind in ("document", "screenshot") or (kind == "photo" and len(lines) >= 3):
        boxes += barcode_like_boxes(gray, lines, codes)
    if kind in ("document", "screenshot") or (kind == "photo" and len(lines) >= 3):
        boxes += colour_mark_boxes(rgb, lines)
        boxes += letterhead_mark_boxes(gray, lines)
    # Faces can appear in every class (a dark portrait, an avatar in a chat, a patient photo
    # pinned to a report); on pages the cascade's false positives sit on text, so those go.
    # Not on films: round grey anatomy (a skull, a breast, a slice's outline) trips the
    # cascade, and a film shows no photographed face.
    if kind == "film":
        detector, faces = face_backend()[0], []
    elif kind in ("document", "screenshot"):
        detector, faces = face_boxes(_unread(rgb, lines, codes))
    else:
        detector, faces = face_boxes(rgb)
    if kind != "photo" or len(lines) >= 3:
        faces = [face for face in faces if _plausible_face(face.box, lines, rgb)]
    boxes += faces
    if kind != "film":
        boxes += badge_boxes(gray, faces)
    needs_review: list[str] = []
    if detector == "unavailable" and kind == "photo":
        needs_review.append("faces not checked: no face detector available")
    if faces:
        needs_review.append("face masked: if the diagnosis depends on it, remove the case (4a)")
    if any(item.label == "illegible" for item in boxes):
        needs_review.append("a label's value OCR could not read was masked: check the mask")
    masked = rgb.copy()
    clipped: list[ImageBox] = []
    for item in boxes:
        box = _clip(item.box, width, height)
        if _area(box) == 0:
            continue
        _paint(masked, item.polygon, box, (0, 0, 0))
        clipped.append(item.model_copy(update={"box": box}))
    near = [
        item.model_copy(update={"box": _clip(item.box, width, height)})
        for item in near_miss_boxes(lines, clipped)
    ]
    return MaskResult(
        image=masked,
        boxes=clipped,
        face_detector=detector,
        needs_review=needs_review,
        near_misses=[item for item in near if _area(item.box) > 0],
    )


# A line is painted over before the cascade only when read as this many characters at least
# this confidently: a glyph or two misread on a pinned photo's face stays for the cascade.
PAINTED_CHARS = 2


def _unread(rgb: np.ndarray, lines: list[OcrLine], codes: list[ImageBox]) -> np.ndarray:
    """A page with its legible text lines and decoded codes painted in the paper's colour,
    for the face cascade: glyphs and code modules pass its early stages and cost it most of
    its time on a page, and a face it finds there is dropped anyway (a face is not text:
    ``_plausible_face``; a code is blacked already)."""
    paper = np.median(rgb[::8, ::8].reshape(-1, 3), axis=0).astype(np.uint8)
    colour = tuple(int(v) for v in paper)
    out = rgb.copy()
    for line in lines:
        if line.score >= LEGIBLE and len(line.text.strip()) >= PAINTED_CHARS:
            _paint(out, line.quad, line.box, colour)
    for item in codes:
        _paint(out, item.polygon, item.box, colour)
    return out


def _paint(
    image: np.ndarray,
    polygon: Sequence[tuple[int, int]] | None,
    box: Box,
    colour: tuple[int, ...],
) -> None:
    """Fill ``polygon`` where there is one, else ``box`` (clipped to the image), in place:
    the one way a mask or the cascade's painted page covers a region."""
    import cv2

    if polygon:
        cv2.fillPoly(image, [np.array(polygon, dtype=np.int32)], colour)
    else:
        x0, y0, x1, y1 = _clip(box, image.shape[1], image.shape[0])
        image[y0:y1, x0:x1] = colour


def _plausible_face(box: Box, lines: list[OcrLine], rgb: np.ndarray) -> bool:
    """On pages the cascade fires on text and paper: a face is not text and has skin
    (or is grey all over, as on a black-and-white print)."""
    import cv2

    height, width = rgb.shape[:2]
    if _area(box) > 0.3 * width * height:
        return False
    inked = sum(_overlap(box, line.box) for line in lines)
    if inked >= 0.2 * max(1, _area(box)):
        return False
    x0, y0, x1, y1 = _clip(box, width, height)
    hsv = cv2.cvtColor(np.ascontiguousarray(rgb[y0:y1, x0:x1]), cv2.COLOR_RGB2HSV)
    skin = (hsv[:, :, 0] <= 25) & (hsv[:, :, 1] >= 40) & (hsv[:, :, 2] >= 60)
    return float(np.mean(skin)) >= 0.15 or float(np.mean(hsv[:, :, 1] < 40)) >= 0.9


def box_coverage(rgb_masked: np.ndarray, box: Box) -> float:
    """Fraction of ``box`` that is solid black in the masked image."""
    x0, y0, x1, y1 = box
    region = rgb_masked[y0:y1, x0:x1]
    if region.size == 0:
        return 1.0
    return float(np.mean(np.all(region == 0, axis=-1)))
