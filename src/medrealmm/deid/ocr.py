"""Chinese OCR (rapidocr-onnxruntime; its models ship inside the wheel, nothing is downloaded).

A page may be photographed sideways or upside down. The recognizer reads only upright lines,
so the page's orientation is decided before recognition: text lines are long and thin, and on
a page turned by 90 or 270 degrees the detector's line boxes stand upright; the direction
classifier then tells a line from its upside-down copy. Lines are detected once, turned with
the page, and read in the upright frame.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

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
    # Where the recognizer placed each character of ``text``: the fraction of the way along
    # the line (quad's top edge, else the box's width) of its centre. OCR drops the wide
    # spaces of a form (柴燕悦  女  46岁 reads 柴燕悦女46岁), so evenly spaced glyphs would
    # put a name's end on the field after it.
    centres: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Page:
    """What OCR read, in the frame where the text stands upright: ``np.rot90(rgb, turns)``."""

    turns: int
    lines: list[OcrLine]
    #: Regions the detector found as text that the recognizer could not read with confidence
    #: (handwriting, a smudge): their ``text`` is the best guess, ``score`` below MIN_SCORE.
    unread: list[OcrLine] = field(default_factory=list)


_LOCK = threading.Lock()
# The recognizer's own floor: below it a "line" is noise (a texture, a stroke of a drawing).
MIN_SCORE = 0.5
# A detected box this many times longer than thick is a line of several characters, whose
# long side shows the reading direction (a single glyph's box is square and says nothing).
LINE_ASPECT = 2.0
# Lines the direction classifier looks at: the longest few decide, the rest add only time.
VOTERS = 24
# Fewer line-shaped boxes than this leave the image as it is.
MIN_VOTERS = 2
# A line read at this confidence or more counts as legible.
LEGIBLE = 0.8
# Two readings of a page within this factor are the same reading.
SAME_READING = 1.25
# Lines are detected on a copy at most this many pixels on its long side (rapidocr's own
# limit rounds up to 1500 or 2000 px, and detection cost grows with the pixels): the text of
# a 1080 px photo or an A4 scan stays over ten pixels high. Recognition reads each line's
# crop from the full-resolution image.
DETECT_SIDE = 960
# Readings kept per process: rendered forms repeat their labels, headers and rules pixel for
# pixel (every report printed from one template), and a line's reading depends only on its
# crop and the width its batch pads it to, so a repeat is read once (a photo never repeats a
# crop, and pays only the hash).
READINGS_KEPT = 4096
_READINGS: OrderedDict[tuple[bytes, tuple[int, ...], float], tuple[object, ...]] = OrderedDict()
_READINGS_LOCK = threading.Lock()


def _engine() -> object:
    # Masking runs in worker threads; build the engine once, under a lock.
    with _LOCK:
        return _build_engine()


@cache
def _build_engine() -> object:
    offline_onnxruntime()
    from rapidocr_onnxruntime import RapidOCR

    logging.getLogger("RapidOCR").setLevel(logging.WARNING)
    # One inference thread: images are masked in parallel by worker processes, and
    # onnxruntime's own pool spins idle cores (on a shared machine it nearly doubled the
    # CPU-seconds of each image). The detector's input size is set by read_page.
    engine = RapidOCR(det_limit_type="max", intra_op_num_threads=1, inter_op_num_threads=1)
    for wrapper in (engine.text_det.infer, engine.text_cls.infer, engine.text_rec.session):
        _fold_session(wrapper)
    _table_normalize(engine.text_det)
    return engine


def _table_normalize(detector: object) -> None:
    """The detector's input scaling looked up per grey level: rapidocr computes it in float64
    over every pixel (a tenth of detection's CPU); a table of its own 256 results per channel,
    applied by ``cv2.LUT``, gives the same float32 input, bit for bit."""
    import cv2

    stock = detector.get_preprocess  # type: ignore[attr-defined]
    levels = np.repeat(np.arange(256, dtype=np.uint8)[:, None, None], 3, axis=2)

    def get_preprocess(longest: int) -> object:
        op = stock(longest)
        table = np.ascontiguousarray(op.normalize(levels), dtype=np.float32)
        op.normalize = lambda img: cv2.LUT(img, table)
        return op

    detector.get_preprocess = get_preprocess  # type: ignore[attr-defined]


def _fold_session(wrapper: object) -> None:
    """Swap a rapidocr model's session for one of the same model with its scalar arithmetic
    folded into the convolutions (deid.onnx_fold): a third less CPU, outputs within ~1e-6."""
    import onnxruntime as ort

    from medrealmm.deid.onnx_cache import edited
    from medrealmm.deid.onnx_fold import folded

    stock = wrapper.session  # type: ignore[attr-defined]
    model = edited(Path(stock._model_path).read_bytes(), folded)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    # The arena keeps the activation buffers between runs: without it every run maps and
    # unmaps them afresh (tens of MB per page), and the page faults cost a tenth of
    # masking's CPU-seconds in kernel time. It holds about 80 MB more; the readings are the
    # same (it only decides where tensors live).
    options.enable_cpu_mem_arena = True
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    wrapper.session = ort.InferenceSession(  # type: ignore[attr-defined]
        model, options, providers=["CPUExecutionProvider"]
    )


def _ordered(points: np.ndarray) -> np.ndarray:
    """Four corners from the top-left one, clockwise (the order the recognizer crops by)."""
    centre = points.mean(axis=0)
    angles = np.arctan2(points[:, 1] - centre[1], points[:, 0] - centre[0])
    ring = points[np.argsort(angles)]  # clockwise in image coordinates (y down)
    start = int(np.argmin(ring[:, 0] + ring[:, 1]))
    return np.roll(ring, -start, axis=0)


def turn_points(points: np.ndarray, turns: int, width: int, height: int) -> np.ndarray:
    """Where ``points`` (x, y) of a ``width`` x ``height`` image land in
    ``np.rot90(img, turns)`` (pixel edges: x = width lands on y = 0)."""
    out = np.array(points, dtype=np.float32)
    for _ in range(turns % 4):
        x, y = out[..., 0].copy(), out[..., 1].copy()
        out[..., 0], out[..., 1] = y, width - x
        width, height = height, width
    return out


def _line_shaped(quad: np.ndarray) -> bool:
    """Several characters long: a glyph's or a blob's box is square and shows no direction."""
    sides = [float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4)]
    return max(sides) >= LINE_ASPECT * max(1.0, min(sides))


def _sideways(quads: list[np.ndarray]) -> bool:
    """Most of the text, by length, runs top to bottom: the page lies on its side."""
    along = across = 0.0
    for quad in quads:
        sides = [quad[(i + 1) % 4] - quad[i] for i in range(4)]
        lengths = [float(np.linalg.norm(side)) for side in sides]
        longest = int(np.argmax(lengths))
        dx, dy = (abs(float(v)) for v in sides[longest])
        if dy > dx:
            across += lengths[longest]
        else:
            along += lengths[longest]
    return across > along


def forget_readings() -> None:
    """Empty this process's readings (a benchmark's engines each start cold)."""
    with _READINGS_LOCK:
        _READINGS.clear()


def recognize(engine: object, crops: list[np.ndarray]) -> list[tuple[object, ...]]:
    """rapidocr's ``text_rec(crops, True)``: (text, score, where) per crop, the same readings.

    rapidocr sorts the crops by aspect, reads them in batches and pads each batch to its
    widest crop (at least the model's 320 px), so a crop's reading depends on the crop and
    that width. Both make the key of a reading already made; the crops not seen before are
    read one per model run, padded to that width: a crop's output alone is the same as in a
    batch, bit for bit, and a line alone costs about a tenth less CPU than in a batch of six
    (its activations stay in the cache)."""
    rec = engine.text_rec  # type: ignore[attr-defined]
    _, height, width = rec.rec_image_shape
    ratios = [crop.shape[1] / float(crop.shape[0]) for crop in crops]
    order = np.argsort(np.array(ratios))
    keys: list[tuple[bytes, tuple[int, ...], float]] = [(b"", (), 0.0)] * len(crops)
    for start in range(0, len(crops), rec.rec_batch_num):
        batch = order[start : start + rec.rec_batch_num]
        padded = max([width / height, *(ratios[i] for i in batch)])
        for i in batch:
            digest = hashlib.blake2b(crops[i].tobytes(), digest_size=16).digest()
            keys[i] = (digest, crops[i].shape, padded)
    with _READINGS_LOCK:
        found = {key: _READINGS[key] for key in keys if key in _READINGS}
        for key in found:
            _READINGS.move_to_end(key)
    for i, key in enumerate(keys):
        if key not in found:
            padded = key[2]
            norm = rec.resize_norm_img(crops[i], padded)[None].astype(np.float32)
            preds = rec.session(norm)[0]
            (reading,) = rec.postprocess_op(
                preds, True, wh_ratio_list=[ratios[i]], max_wh_ratio=padded
            )
            found[key] = tuple(reading)
    with _READINGS_LOCK:
        for key, reading in found.items():
            _READINGS[key] = reading
        while len(_READINGS) > READINGS_KEPT:
            _READINGS.popitem(last=False)
    return [found[key] for key in keys]


def _upside_down(engine: object, crops: list[np.ndarray]) -> bool:
    """The direction classifier's vote over the longest lines, weighted by its confidence."""
    voters = sorted(crops, key=lambda crop: crop.shape[1] / max(1, crop.shape[0]))[-VOTERS:]
    _, votes, _ = engine.text_cls(voters)  # type: ignore[attr-defined]
    flipped = sum(float(score) for label, score in votes if "180" in str(label))
    level = sum(float(score) for label, score in votes if "180" not in str(label))
    return flipped > level


def _legibility(engine: object, crops: list[np.ndarray]) -> float:
    """Letters and digits read with confidence, weighted by it, over the longest lines (a
    texture read as letters or symbols scores low either way up)."""
    longest = sorted(crops, key=lambda crop: crop.shape[1] / max(1, crop.shape[0]))[-VOTERS:]
    return sum(
        float(score) * sum(char.isalnum() for char in str(text))
        for text, score, _ in recognize(engine, longest)
        if float(score) >= LEGIBLE  # type: ignore[arg-type]
    )


def _crops(engine: object, bgr: np.ndarray, quads: list[np.ndarray]) -> list[np.ndarray]:
    return engine.get_crop_img_list(bgr, [q.astype(np.float32) for q in quads])  # type: ignore[attr-defined,no-any-return]


def read_page(rgb: np.ndarray) -> Page:
    """Detect lines, turn the page (and the lines) upright, then read them."""
    engine = _engine()
    import cv2

    bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
    height, width = bgr.shape[:2]
    scale = min(1.0, DETECT_SIDE / max(height, width))
    small = bgr
    if scale < 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        small = cv2.resize(bgr, size, interpolation=cv2.INTER_AREA)
    found, _ = engine(small, use_cls=False, use_rec=False)  # type: ignore[operator]
    quads = [np.array(q, dtype=np.float32).reshape(4, 2) / scale for q in found or []]
    if not quads:
        return Page(0, [])
    # Only line-shaped boxes vote, and only enough of them: a photo whose "text" is an
    # eyebrow or a bar stays as it is.
    voters = [i for i, quad in enumerate(quads) if _line_shaped(quad)]
    enough = len(voters) >= MIN_VOTERS
    level_quads, level_bgr = quads, bgr
    turns = 1 if enough and _sideways([quads[i] for i in voters]) else 0
    if turns:
        height, width = bgr.shape[:2]
        bgr = np.ascontiguousarray(np.rot90(bgr, turns))
        quads = [_ordered(turn_points(q, turns, width, height)) for q in quads]
    crops = _crops(engine, bgr, quads)
    if enough and _upside_down(engine, [crops[i] for i in voters]):
        height, width = bgr.shape[:2]
        turns += 2
        quads = [_ordered(turn_points(q, 2, width, height)) for q in quads]
        crops = [np.ascontiguousarray(np.rot90(crop, 2)) for crop in crops]
    # A turn stands only if the recognizer reads the turned lines, and about as well as the
    # lines as they lie (on a photo with a few letters the classifier's vote is a coin toss;
    # the recognizer's own crops of standing lines are read turned one way already, so on a
    # page turned that way both readings are the same text, a few hundredths apart).
    legible = _legibility(engine, [crops[i] for i in voters]) if turns else 0.0
    if turns and (
        legible <= 0
        or legible * SAME_READING
        < _legibility(engine, _crops(engine, level_bgr, [level_quads[i] for i in voters]))
    ):
        turns, quads = 0, level_quads
        crops = _crops(engine, level_bgr, quads)
    lines: list[OcrLine] = []
    unread: list[OcrLine] = []
    for quad, (text, score, where) in zip(quads, recognize(engine, crops), strict=True):
        xs = [round(float(p[0])) for p in quad]
        ys = [round(float(p[1])) for p in quad]
        box = (min(xs), min(ys), max(xs), max(ys))
        quad_ = tuple(zip(xs, ys, strict=True))
        if float(score) < MIN_SCORE or not str(text).strip():
            unread.append(OcrLine(box, str(text), float(score), quad_))
            continue
        standing = np.linalg.norm(quad[3] - quad[0]) >= 1.5 * np.linalg.norm(quad[1] - quad[0])
        centres = None if standing else _centres(str(text), where)
        lines.append(OcrLine(box, str(text), float(score), quad_, centres))
    return Page(
        turns % 4,
        sorted(lines, key=lambda line: (line.box[1], line.box[0])),
        sorted(unread, key=lambda line: (line.box[1], line.box[0])),
    )


def _centres(text: str, where: list[object]) -> tuple[float, ...] | None:
    """Each character's centre as a fraction of the crop's width, from the CTC columns the
    recognizer decoded it at (``where``: columns spanning the crop, then per-word columns)."""
    columns, _, word_columns = where[0], where[1], where[2]
    flat = [int(c) for word in word_columns for c in word]  # type: ignore[attr-defined]
    span = float(columns)  # type: ignore[arg-type]
    if len(flat) != len(text) or span <= 0:
        return None
    return tuple(min(1.0, (c + 0.5) / span) for c in flat)
