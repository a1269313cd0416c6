"""Shrink a text mask to the ink it was drawn for.

A text box is placed from the recognizer's estimates (glyph centres, the detector's line
box) and grown by generous margins so that an estimate's error never leaves a stroke
showing. Most of that margin is blank paper, and on a dense form it is the neighbouring
field. The ink is measured instead: in the mask's own frame (turned with the line on a
tilted photo), the columns of the value are found from its middle outwards up to a blank
gap wider than a glyph's own gaps, the rows likewise, and a small margin is added back.
A mask only ever shrinks: where no clear gap separates the value from its neighbours
(noise, a photo's texture) it stays as placed.
"""

from __future__ import annotations

import numpy as np

from medrealmm.deid.record import ImageBox

# Fractions of the line's height: the part of a mask at each end that may be margin (the
# rest is the value's own glyphs), the blank run that ends a value (wider than the gaps
# inside a Han glyph or between its characters), and the margin kept around the ink.
CORE_INSET = 0.55
GAP = 0.3
ROW_GAP = 0.15
MARGIN = 0.2
MIN_MARGIN = 3
# Ink differs from the paper by this much (grey levels), or this share of the strongest
# contrast in the mask, whichever is more: faint scans and bold print alike.
MIN_CONTRAST = 20.0
CONTRAST_SHARE = 0.4


def _frame(item: ImageBox) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """Origin, along and across unit vectors, length and height of the mask's rectangle."""
    if item.polygon and len(item.polygon) == 4:
        tl, tr, _, bl = (np.array(p, dtype=float) for p in item.polygon)
    else:
        x0, y0, x1, y1 = item.box
        tl, tr, bl = np.array([x0, y0], float), np.array([x1, y0], float), np.array([x0, y1], float)
    length = float(np.hypot(*(tr - tl)))
    height = float(np.hypot(*(bl - tl)))
    return tl, (tr - tl) / max(length, 1.0), (bl - tl) / max(height, 1.0), length, height


def _strip(
    gray: np.ndarray, tl: np.ndarray, u: np.ndarray, n: np.ndarray, w: int, h: int
) -> np.ndarray:
    """The mask's rectangle resampled upright, ``w`` x ``h`` pixels."""
    import cv2

    if abs(u[1]) < 1e-6 and abs(n[0]) < 1e-6:
        x0, y0 = int(tl[0] + 0.5), int(tl[1] + 0.5)
        gh, gw = gray.shape
        crop = np.full((h, w), np.nan, dtype=np.float32)
        sx0, sy0 = max(0, x0), max(0, y0)
        sx1, sy1 = min(gw, x0 + w), min(gh, y0 + h)
        if sx1 > sx0 and sy1 > sy0:
            crop[sy0 - y0 : sy1 - y0, sx0 - x0 : sx1 - x0] = gray[sy0:sy1, sx0:sx1]
        return crop
    matrix = np.array([[u[0], n[0], tl[0]], [u[1], n[1], tl[1]]], dtype=np.float64)
    return cv2.warpAffine(
        gray.astype(np.float32),
        matrix,
        (w, h),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=float("nan"),
    )


def _reach(ink: np.ndarray, start: int, step: int, gap: int) -> int:
    """The last ink index reached from ``start`` moving by ``step`` before ``gap`` blanks."""
    last, i, blank = start, start, 0
    while 0 <= i < len(ink):
        if ink[i]:
            last, blank = i, 0
        else:
            blank += 1
            if blank >= gap:
                break
        i += step
    return last


def fit_to_ink(gray: np.ndarray, item: ImageBox, pad: float, along: bool = True) -> ImageBox:
    """``item`` (a text mask grown by ``pad`` of its line's height above and below)
    shrunk to the ink inside it plus a margin; unchanged when the ink has no clear edge.
    ``along=False`` shrinks only across the line (its ends stay as placed)."""
    tl, u, n, length, height = _frame(item)
    w, h = int(length), int(height)
    line = height / (1 + 2 * pad)
    if w < 4 or h < 4 or line < 4:
        return item
    strip = _strip(gray, tl, u, n, w, h)
    seen = ~np.isnan(strip)
    if seen.mean() < 0.9:
        return item
    paper = float(np.median(strip[seen]))
    contrast = np.where(seen, np.abs(strip - paper), 0.0)
    strongest = float(np.percentile(contrast, 99.5))
    if strongest < MIN_CONTRAST:
        return item
    ink = contrast > max(MIN_CONTRAST, CONTRAST_SHARE * strongest)
    band = ink[int(pad * line) : int(h - pad * line) + 1]
    cols = band.any(axis=0)
    inset = int(CORE_INSET * line)
    core_left, core_right = min(inset, w // 2), max(w - 1 - inset, w // 2)
    gap = max(2, int(GAP * line))
    left = _reach(cols, core_left, -1, gap) if cols[: core_left + 1].any() else core_left
    right = _reach(cols, core_right, 1, gap) if cols[core_right:].any() else core_right
    left, right = min(left, core_left), max(right, core_right)
    rows = ink[:, left : right + 1].any(axis=1)
    mid_top, mid_bottom = int((pad + 0.3) * line), int((pad + 0.7) * line)
    if not rows[mid_top : mid_bottom + 1].any():
        return item
    row_gap = max(2, int(ROW_GAP * line))
    top = _reach(rows, mid_top, -1, row_gap) if rows[: mid_top + 1].any() else mid_top
    bottom = _reach(rows, mid_bottom, 1, row_gap) if rows[mid_bottom:].any() else mid_bottom
    top, bottom = min(top, mid_top), max(bottom, mid_bottom)
    margin = max(MIN_MARGIN, MARGIN * line)
    a0, a1 = max(0.0, left - margin), min(length, right + 1 + margin)
    if not along:
        a0, a1 = 0.0, length
    b0, b1 = max(0.0, top - margin), min(height, bottom + 1 + margin)
    if (a1 - a0) * (b1 - b0) >= 0.97 * length * height:
        return item
    corners = [
        tl + u * a0 + n * b0,
        tl + u * a1 + n * b0,
        tl + u * a1 + n * b1,
        tl + u * a0 + n * b1,
    ]
    if not item.polygon:
        x0, y0 = corners[0]
        x1, y1 = corners[2]
        box = (int(np.floor(x0)), int(np.floor(y0)), int(np.ceil(x1)), int(np.ceil(y1)))
        return item.model_copy(update={"box": box})
    polygon = [(round(float(p[0])), round(float(p[1]))) for p in corners]
    xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
    box = (min(xs), min(ys), max(xs) + 1, max(ys) + 1)
    return item.model_copy(update={"box": box, "polygon": polygon})
