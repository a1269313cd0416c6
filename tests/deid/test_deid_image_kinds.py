"""The failure kinds of issue 13 on images, each on a small synthetic image made here."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from medrealmm.deid.image import (
    code_boxes,
    colour_mark_boxes,
    film_overlay_boxes,
    image_kind,
    mask_image,
    numbered_field_boxes,
    text_box,
)
from medrealmm.deid.metrics import covered
from medrealmm.deid.ocr import OcrLine
from medrealmm.fonts import require_cjk_font

from .test_deid_faces import _drawn_face


def _kind(rgb: np.ndarray, lines: list[OcrLine] | None = None) -> str:
    return image_kind(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY), rgb, lines or [])


def test_a_dark_portrait_is_a_photo_and_its_face_is_masked() -> None:
    rgb = (_drawn_face().astype(float) * 0.3).astype(np.uint8)
    assert _kind(rgb) == "photo"  # dark, but coloured: not a film
    result = mask_image(rgb)
    assert any(b.kind == "face" for b in result.boxes)


def test_a_skin_photo_on_a_pale_sheet_is_not_a_document() -> None:
    img = Image.new("RGB", (400, 300), (236, 236, 232))
    ImageDraw.Draw(img).ellipse((150, 100, 260, 190), fill=(200, 140, 120))
    rgb = np.array(img)
    assert _kind(rgb) == "photo"
    blacked = float(np.mean((mask_image(rgb).image == 0).all(axis=2)))
    assert blacked < 0.01


def test_a_dark_grey_frame_is_a_film() -> None:
    img = Image.new("RGB", (400, 400), (10, 10, 10))
    ImageDraw.Draw(img).ellipse((100, 100, 300, 300), fill=(110, 110, 110))
    assert _kind(np.array(img)) == "film"


def _page() -> tuple[Image.Image, ImageDraw.ImageDraw]:
    img = Image.new("RGB", (600, 500), (250, 250, 247))
    return img, ImageDraw.Draw(img)


def test_red_stamps_are_marks_but_blue_ink_and_chat_bubbles_are_not() -> None:
    img, draw = _page()
    draw.ellipse((400, 300, 520, 420), outline=(210, 30, 30), width=5)
    font = ImageFont.truetype(str(require_cjk_font()), 18)
    draw.text((425, 350), "检验专用", font=font, fill=(210, 30, 30))
    # Blue-ink handwriting: thin strokes across the body of the page.
    rng = np.random.default_rng(4)
    points = [(60 + 8 * i, 250 + int(rng.integers(-12, 12))) for i in range(30)]
    draw.line(points, fill=(30, 50, 190), width=2)
    # A green chat bubble: a large filled rounded rectangle.
    draw.rounded_rectangle((60, 330, 300, 400), radius=12, fill=(149, 236, 105))
    boxes = [b.box for b in colour_mark_boxes(np.array(img), [])]
    assert len(boxes) == 1
    x0, y0, x1, y1 = boxes[0]
    assert x0 <= 400 and y0 <= 300 and x1 >= 520 and y1 >= 420


def test_a_letterhead_logo_is_a_mark() -> None:
    img, draw = _page()
    draw.ellipse((20, 10, 80, 70), outline=(20, 90, 170), width=8)
    draw.rectangle((40, 30, 60, 50), fill=(20, 90, 170))
    boxes = [b.box for b in colour_mark_boxes(np.array(img), [])]
    assert boxes and boxes[0][0] <= 20 and boxes[0][3] >= 70


def _line(box: tuple[int, int, int, int], text: str) -> OcrLine:
    return OcrLine(box, text, 0.9)


def test_film_overlays_go_where_they_identify_and_measurements_stay() -> None:
    lines = [
        _line((10, 10, 150, 30), "ZHANG^WEI"),  # top-left corner, no label
        _line((450, 10, 590, 30), "2025-06-01 10:32"),
        _line((250, 280, 360, 300), "D1 23.4mm"),  # a callout in the middle
        _line((230, 320, 380, 340), "HR 72bpm"),
        _line((10, 570, 120, 590), "Depth 16cm"),  # a setting in a corner: clinical
        _line((240, 240, 370, 260), "ID: 4821733"),  # a labelled field, even in the middle
    ]
    texts = {
        line.text
        for box in film_overlay_boxes(lines, 600, 600)
        for line in lines
        if box.box[0] <= line.box[0]
        and box.box[2] >= line.box[2]
        and box.box[1] <= line.box[1]
        and box.box[3] >= line.box[3]
    }
    assert {"ZHANG^WEI", "2025-06-01 10:32", "ID: 4821733"} <= texts
    assert not texts & {"D1 23.4mm", "HR 72bpm", "Depth 16cm"}


def test_tilted_text_is_masked_as_a_slice_of_its_quad_not_its_hull() -> None:
    # A line 400 px long tilted by 20 degrees: its hull is ~160 px tall, the line 20.
    angle = np.radians(20)
    u, n = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
    tl = np.array([100.0, 100.0])
    corners = [tl, tl + 400 * u, tl + 400 * u + 20 * n, tl + 20 * n]
    quad = tuple((round(float(x)), round(float(y))) for x, y in corners)
    xs, ys = [p[0] for p in quad], [p[1] for p in quad]
    line = OcrLine((min(xs), min(ys), max(xs), max(ys)), "姓名张三丰年龄四十岁", 0.9, quad)
    item = text_box(line, 2, 5, "text", "NAME")
    assert item.polygon is not None
    canvas = np.zeros((500, 600), np.uint8)
    cv2.fillPoly(canvas, [np.array(item.polygon, dtype=np.int32)], 255)
    # Covers the name's glyphs along the tilted baseline ...
    for frac in (2.5 / 10, 4.5 / 10):
        centre = tl + 400 * frac * u + 10 * n
        assert canvas[int(centre[1]), int(centre[0])] == 255
    # ... but not the hull's far corners, where the neighbouring lines are.
    area = float(np.mean(canvas > 0)) * canvas.size
    x0, y0, x1, y1 = item.box
    assert area < 0.5 * (x1 - x0) * (y1 - y0)


def test_barcodes_on_a_tilted_photo_are_decoded() -> None:
    zxingcpp = pytest.importorskip("zxingcpp")
    bars = zxingcpp.create_barcode("MRN20240611", zxingcpp.BarcodeFormat.Code128)
    code = Image.fromarray(np.array(zxingcpp.write_barcode_to_image(bars, scale=3))).convert("RGB")
    page = Image.new("RGB", (700, 500), "white")
    # Centred, so the turn about the page centre leaves the symbol's centre in place.
    page.paste(code, (350 - code.width // 2, 250 - code.height // 2))
    tilted = page.rotate(25, fillcolor="white", resample=Image.Resampling.BICUBIC)
    found = code_boxes(np.array(tilted))
    assert {b.kind for b in found} == {"barcode"}  # the decode's box and the symbol's outline
    masked = np.array(tilted)
    x0, y0, x1, y1 = found[0].box
    masked[max(0, y0) : y1, max(0, x0) : x1] = 0
    # The centre of the turned symbol is covered.
    assert covered(masked, (330, 245, 370, 255))


def test_a_numbered_field_is_masked_even_when_ocr_misreads_its_label() -> None:
    line = _line((0, 0, 300, 20), "内诊号：134987948")
    (item,) = numbered_field_boxes([line])
    assert 60 <= item.box[0] <= 130 and item.box[2] >= 300  # the digits, not the label
    assert numbered_field_boxes([_line((0, 0, 300, 20), "床号：12")]) == []


def test_a_tilted_barcode_read_along_a_diagonal_is_masked_to_its_last_bar() -> None:
    zxingcpp = pytest.importorskip("zxingcpp")
    import cv2

    bars = zxingcpp.create_barcode("4937261508", zxingcpp.BarcodeFormat.Code128)
    code = Image.fromarray(np.array(zxingcpp.write_barcode_to_image(bars, scale=2))).convert("RGB")
    page = Image.new("RGB", (640, 480), "white")
    page.paste(code, (320 - code.width // 2, 240 - code.height // 2))
    for turn in (25, -18):
        tilted = np.array(page.rotate(turn, fillcolor="white", resample=Image.Resampling.BICUBIC))
        masked = tilted.copy()
        for item in code_boxes(tilted):
            if item.polygon:
                cv2.fillPoly(masked, [np.array(item.polygon, dtype=np.int32)], (0, 0, 0))
            else:
                x0, y0, x1, y1 = item.box
                masked[max(0, y0) : y1, max(0, x0) : x1] = 0
        visible_bars = (masked.max(axis=-1) < 100) & (masked.max(axis=-1) > 0)
        assert int(visible_bars.sum()) == 0


def test_the_table_round_a_photographed_page_is_not_a_stamp() -> None:
    from medrealmm.deid.image import colour_mark_boxes

    img = Image.new("RGB", (600, 600), (150, 95, 60))  # a brown wooden table
    draw = ImageDraw.Draw(img)
    # The page fills the frame but for its corners: triangles of table as compact as a stamp.
    page = [(150, 0), (450, 0), (600, 250), (600, 350), (450, 600), (150, 600), (0, 350), (0, 250)]
    draw.polygon(page, fill=(245, 245, 242))
    draw.ellipse((250, 250, 350, 350), outline=(200, 35, 40), width=5)  # the page's stamp
    boxes = colour_mark_boxes(np.array(img), [])
    assert len(boxes) == 1 and 230 <= boxes[0].box[0] <= 250 and boxes[0].box[2] <= 370
