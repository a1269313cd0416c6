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
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from medrealmm.deid.ocr import OcrLine, read_lines
from medrealmm.deid.record import Box, ImageBox
from medrealmm.deid.text import find_spans

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


def load_without_metadata(path: Path | str) -> np.ndarray:
    """Pixels only (EXIF orientation applied first): metadata cannot survive a pixel copy."""
    with Image.open(path) as img:
        img = ImageOps.exif_transpose(img)
        return np.array(img.convert("RGB"))


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


def _char_weight(char: str) -> float:
    return 0.55 if ord(char) < 0x2E80 else 1.0


def sub_box(line: OcrLine, start: int, end: int) -> Box:
    """The part of a line's box holding characters ``[start, end)``, by glyph width."""
    weights = [_char_weight(c) for c in line.text] or [1.0]
    total = sum(weights)
    x0, y0, x1, y1 = line.box
    left = x0 + (x1 - x0) * sum(weights[:start]) / total
    right = x0 + (x1 - x0) * sum(weights[:end]) / total
    pad = int((y1 - y0) * PAD)
    # One extra glyph of margin each side: widths are estimated, coverage must not be.
    glyph = (y1 - y0) * 0.6
    return (int(left - glyph), y0 - pad, int(right + glyph + 0.5), y1 + pad)


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


def flagged_text_boxes(lines: list[OcrLine]) -> list[ImageBox]:
    """Read each row as one string (label and value may be separate OCR boxes), run the text
    recognizers, and map every span back onto the boxes it came from."""
    out: list[ImageBox] = []
    for row in _rows(lines):
        joined = ""
        offsets: list[tuple[int, OcrLine]] = []
        for line in row:
            if joined:
                joined += " "
            offsets.append((len(joined), line))
            joined += line.text
        for span in find_spans(joined):
            for offset, line in offsets:
                lo = max(span.start, offset) - offset
                hi = min(span.end, offset + len(line.text)) - offset
                if hi > lo:
                    out.append(
                        ImageBox(kind="text", box=sub_box(line, lo, hi), label=span.type.value)
                    )
    return out


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
        if line.text[label_end:].strip(":：～~^-_ ").isalnum():
            continue  # a readable value follows: the text recognizers judge it
        x0, y0, x1, y1 = line.box
        h = y1 - y0
        # OCR may swallow the scribble into the label's box: start where the label's
        # glyphs end (estimated from the line height), not where the box does.
        # A glyph is at most ~0.6 of the box height wide; erring short only blacks the colon.
        glyphs = sum(_char_weight(c) for c in line.text[:label_end])
        start = min(x1, x0 + int(glyphs * 0.5 * h))
        end = max(x1 + h, start + 8 * h)
        out.append(
            ImageBox(
                kind="signature",
                box=(start, y0 - int(h * 0.6), min(width, end), y1 + int(h * 0.6)),
            )
        )
    return out


# -- codes, logos, faces ---------------------------------------------------------------
def code_boxes(rgb: np.ndarray) -> list[ImageBox]:
    import zxingcpp

    out: list[ImageBox] = []
    for code in zxingcpp.read_barcodes(rgb[:, :, ::-1].copy()):
        p = code.position
        xs = [p.top_left.x, p.top_right.x, p.bottom_left.x, p.bottom_right.x]
        ys = [p.top_left.y, p.top_right.y, p.bottom_left.y, p.bottom_right.y]
        kind = "qr" if "QR" in str(code.format) else "barcode"
        margin = max(4, (max(xs) - min(xs)) // 10)
        out.append(ImageBox(kind=kind, box=_pad((min(xs), min(ys), max(xs), max(ys)), margin)))
    return out


def barcode_like_boxes(gray: np.ndarray, text: list[OcrLine]) -> list[ImageBox]:
    """Undecodable 1-D barcodes: dense vertical strokes with no horizontal ones, away from
    any text OCR read (digits have vertical strokes too, and lab values must survive)."""
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
        vertical = float(np.abs(gx[y : y + h, x : x + w]).sum())
        horizontal = float(np.abs(gy[y : y + h, x : x + w]).sum()) + 1.0
        if vertical / horizontal < 3.0:  # bars: edges across, none along
            continue
        out.append(ImageBox(kind="barcode", box=_pad(box, 10)))
    return out


MAX_MARK_FRACTION = 0.15


def colour_mark_boxes(rgb: np.ndarray, text: list[OcrLine]) -> list[ImageBox]:
    """Logos, stamps and signatures on documents are the coloured ink on a white page."""
    import cv2

    hsv = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV)
    mask = ((hsv[:, :, 1] > 90) & (hsv[:, :, 2] > 40)).astype(np.uint8) * 255
    mask = cv2.dilate(mask, cv2.getStructuringElement(cv2.MORPH_RECT, (9, 9)))
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    page = rgb.shape[0] * rgb.shape[1]
    out: list[ImageBox] = []
    for i in range(1, count):
        x, y, w, h, area = stats[i]
        if area < 300 or w < 15 or h < 15:
            continue
        if w * h > MAX_MARK_FRACTION * page:
            continue  # a logo or stamp is never a large part of the page: that is content
        box = (int(x), int(y), int(x + w), int(y + h))
        out.append(ImageBox(kind="logo", box=_pad(box, 3)))
    return out


@cache
def face_backend() -> tuple[str, object | None]:
    """Haar cascade where OpenCV still ships one; else a YuNet model named by
    ``MEDREALMM_FACE_MODEL``; else none (and photos are flagged for manual review)."""
    import cv2

    cascade_dir = getattr(getattr(cv2, "data", None), "haarcascades", "")
    cascade_file = Path(cascade_dir) / "haarcascade_frontalface_default.xml"
    if hasattr(cv2, "CascadeClassifier") and cascade_file.is_file():
        return "opencv-haar", cv2.CascadeClassifier(str(cascade_file))
    model = os.environ.get(FACE_MODEL_ENV)
    if model and Path(model).is_file() and hasattr(cv2, "FaceDetectorYN"):
        return "opencv-yunet", cv2.FaceDetectorYN.create(model, "", (320, 320))
    return "unavailable", None


def face_boxes(rgb: np.ndarray) -> tuple[str, list[ImageBox]]:
    import cv2

    name, detector = face_backend()
    if detector is None:
        return name, []
    bgr = rgb[:, :, ::-1].copy()
    found: Iterable[tuple[int, int, int, int]]
    if name == "opencv-haar":
        gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
        found = detector.detectMultiScale(gray, scaleFactor=1.1, minNeighbors=5)  # type: ignore[attr-defined]
    else:
        detector.setInputSize((bgr.shape[1], bgr.shape[0]))  # type: ignore[attr-defined]
        _, faces = detector.detect(bgr)  # type: ignore[attr-defined]
        found = [tuple(int(v) for v in face[:4]) for face in (faces if faces is not None else [])]
    boxes = []
    for x, y, w, h in found:
        m = int(0.15 * max(w, h))
        boxes.append(ImageBox(kind="face", box=(x - m, y - m, x + w + m, y + h + m)))
    return name, boxes


# -- the masker ------------------------------------------------------------------------
def image_kind(gray: np.ndarray, rgb: np.ndarray | None = None) -> str:
    median = float(np.median(gray))
    if median >= 190 and (rgb is None or _mostly_unsaturated(rgb)):
        # Paper is bright AND colourless; light skin is bright but not grey.
        return "document"
    if median <= 60:
        return "film"
    return "photo"


def _mostly_unsaturated(rgb: np.ndarray) -> bool:
    import cv2

    saturation = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV)[:, :, 1]
    return float(np.mean(saturation < 40)) > 0.6


def mask_image(rgb: np.ndarray) -> MaskResult:
    """Find identifying regions in ``rgb`` and return a copy with each one blacked out."""
    import cv2

    started = time.perf_counter()
    height, width = rgb.shape[:2]
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    kind = image_kind(gray, rgb)
    lines = read_lines(rgb)
    boxes: list[ImageBox] = []
    if kind == "film":
        # Burnt-in overlay text on radiology films: every character of it goes.
        boxes += [
            ImageBox(
                kind="overlay", box=_pad(line.box, max(2, int((line.box[3] - line.box[1]) * PAD)))
            )
            for line in lines
        ]
    else:
        boxes += flagged_text_boxes(lines)
        boxes += signature_boxes(lines, width)
    boxes += code_boxes(rgb)
    if kind == "document":
        boxes += barcode_like_boxes(gray, lines)
        boxes += colour_mark_boxes(rgb, lines)
    # Faces are looked for in photos only: on printed pages and films the cascade's false
    # positives are page-sized and would black out the clinical content.
    detector, faces = face_boxes(rgb) if kind == "photo" else (face_backend()[0], [])
    boxes += faces
    needs_review: list[str] = []
    if detector == "unavailable" and kind == "photo":
        needs_review.append("faces not checked: no face detector available")
    if faces:
        needs_review.append("face masked: if the diagnosis depends on it, remove the case (4a)")
    masked = rgb.copy()
    clipped: list[ImageBox] = []
    for item in boxes:
        box = _clip(item.box, width, height)
        if _area(box) == 0:
            continue
        masked[box[1] : box[3], box[0] : box[2]] = 0
        clipped.append(item.model_copy(update={"box": box}))
    return MaskResult(
        image=masked,
        boxes=clipped,
        face_detector=detector,
        needs_review=needs_review,
        seconds=time.perf_counter() - started,
    )


def box_coverage(rgb_masked: np.ndarray, box: Box) -> float:
    """Fraction of ``box`` that is solid black in the masked image."""
    x0, y0, x1, y1 = box
    region = rgb_masked[y0:y1, x0:x1]
    if region.size == 0:
        return 1.0
    return float(np.mean(np.all(region == 0, axis=-1)))
