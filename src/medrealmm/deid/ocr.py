"""Chinese OCR (rapidocr-onnxruntime; its models ship inside the wheel, nothing is downloaded)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from functools import cache

import numpy as np

from medrealmm.deid.onnx_env import offline_onnxruntime
from medrealmm.deid.record import Box

Quad = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class OcrLine:
    box: Box
    text: str
    score: float
    # The detector's four corners (top-left, top-right, bottom-right, bottom-left): on a
    # rotated photo the axis-aligned ``box`` spills over neighbouring lines, the quad does not.
    quad: Quad | None = None


_LOCK = threading.Lock()


def _engine() -> object:
    # Masking runs in worker threads; build the engine once, under a lock.
    with _LOCK:
        return _build_engine()


@cache
def _build_engine() -> object:
    offline_onnxruntime()
    from rapidocr_onnxruntime import RapidOCR

    logging.getLogger("RapidOCR").setLevel(logging.WARNING)
    # Detection on at most 1280 px on the long side: a 1080p frame's text is still found,
    # and recognition reads the crops at full resolution.
    return RapidOCR(det_limit_side_len=1280, det_limit_type="max")


def read_lines(rgb: np.ndarray) -> list[OcrLine]:
    """Text lines with axis-aligned boxes and their quads, top to bottom then left to right."""
    result, _ = _engine()(rgb[:, :, ::-1].copy(), use_cls=False)  # type: ignore[operator]
    lines: list[OcrLine] = []
    for quad, text, score in result or []:
        xs = [round(float(p[0])) for p in quad]
        ys = [round(float(p[1])) for p in quad]
        box = (min(xs), min(ys), max(xs), max(ys))
        lines.append(OcrLine(box, str(text), float(score), tuple(zip(xs, ys, strict=True))))
    return sorted(lines, key=lambda line: (line.box[1], line.box[0]))
