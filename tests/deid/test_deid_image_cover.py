"""Image masks cover the whole identifier and little else: tight boxes on text, a title with
its surname, a Latin label glued to its value, badges on photos and pale letterhead emblems."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from medrealmm.deid.image import (
    PAD,
    flagged_text_boxes,
    glued_label_start,
    latin_tag_boxes,
    letterhead_mark_boxes,
    text_box,
)
from medrealmm.deid.image_fit import fit_to_ink
from medrealmm.deid.ocr import OcrLine
from medrealmm.deid.record import ImageBox
from medrealmm.fonts import require_cjk_font


def _black(gray: np.ndarray, item: ImageBox) -> np.ndarray:
    out = np.zeros(gray.shape, bool)
    x0, y0, x1, y1 = item.box
    out[max(0, y0) : y1, max(0, x0) : x1] = True
    return out


def test_a_text_mask_shrinks_to_its_ink_and_still_covers_it() -> None:
    img = Image.new("L", (400, 120), 250)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(require_cjk_font()), 28)
    draw.text((40, 40), "姓名：", font=font, fill=20)
    value = draw.textbbox((140, 40), "欧阳明", font=font)
    draw.text((140, 40), "欧阳明", font=font, fill=20)
    gray = np.array(img)
    line = OcrLine((36, 34, 240, 76), "姓名：欧阳明", 0.99)
    placed = text_box(line, 3, 6, "field", None)
    fitted = fit_to_ink(gray, placed, PAD)
    black = _black(gray, fitted)
    ink = gray < 128
    x0, y0, x1, y1 = value
    assert black[y0:y1, x0:x1][ink[y0:y1, x0:x1]].all()  # every stroke of the value
    assert not black[:, :130][ink[:, :130]].any()  # none of the label's
    placed_area = (placed.box[2] - placed.box[0]) * (placed.box[3] - placed.box[1])
    assert int(black.sum()) < 0.8 * placed_area


def test_a_mask_over_noise_or_blank_paper_stays_as_placed() -> None:
    rng = np.random.default_rng(0)
    noisy = rng.integers(0, 255, (100, 300), dtype=np.uint8)
    blank = np.full((100, 300), 240, np.uint8)
    item = ImageBox(kind="text", box=(50, 20, 250, 80))
    assert fit_to_ink(noisy, item, PAD) == item
    assert fit_to_ink(blank, item, PAD) == item


def test_a_latin_label_glued_to_its_value_is_masked_with_it() -> None:
    assert glued_label_start("ID:6576667", 3) == 0
    assert glued_label_start("见 No.45678", 5) == 2
    assert glued_label_start("MRN#1234567", 4) == 0
    assert glued_label_start("姓名：1234567", 3) == 3  # a Han label is not part of it
    assert glued_label_start("CT 1234567", 3) == 3  # a space: two tokens


def test_a_title_after_a_surname_is_masked_with_the_name() -> None:
    line = OcrLine((0, 0, 300, 30), "谢谢王主任", 0.99)
    boxes = [item for item in flagged_text_boxes([line]) if item.label == "NAME"]
    assert boxes
    # The title's last glyph ends at the line's right edge.
    assert max(item.box[2] for item in boxes) >= 300


def test_words_on_a_badge_in_a_photo_are_masked_with_the_badge() -> None:
    gray = np.full((400, 600), 40, np.uint8)  # a dark jacket
    gray[200:250, 150:350] = 190  # the badge, its emblem at the left
    gray[210:240, 160:190] = 90
    line = OcrLine((220, 210, 330, 240), "ANNA BERG", 0.8)
    (badge,) = latin_tag_boxes(gray, [line])
    x0, y0, x1, y1 = badge.box
    assert x0 <= 150 and y0 <= 200 and x1 >= 350 and y1 >= 250
    assert (x1 - x0) * (y1 - y0) < 2 * 200 * 50


def test_scanner_settings_and_single_words_on_a_photo_are_not_tags() -> None:
    gray = np.full((200, 400), 120, np.uint8)
    lines = [OcrLine((10, 10, 120, 40), "W 400 L 40", 0.9), OcrLine((10, 60, 60, 90), "cgn", 0.6)]
    assert latin_tag_boxes(gray, lines) == []


def test_a_pale_emblem_beside_the_institution_name_is_masked() -> None:
    img = Image.new("L", (1000, 800), 225)
    draw = ImageDraw.Draw(img)
    draw.ellipse((60, 40, 150, 130), fill=200)  # a pale grey emblem, no colour
    font = ImageFont.truetype(str(require_cjk_font()), 40)
    draw.text((180, 62), "安平市第一人民医院", font=font, fill=30)
    gray = np.array(img)
    line = OcrLine((178, 60, 545, 108), "安平市第一人民医院", 0.99)
    marks = letterhead_mark_boxes(gray, [line])
    assert any(
        m.box[0] <= 60 and m.box[2] >= 150 and m.box[1] <= 40 and m.box[3] >= 130 for m in marks
    )
    # The same emblem far down the page is not a letterhead's.
    low = OcrLine((178, 660, 545, 708), "安平市第一人民医院", 0.99)
    assert letterhead_mark_boxes(gray, [low]) == []
