"""Images are read like text: a header's fields and a table's cells one by one, a value OCR
could not read after an identifying label, an account id in a chat bubble, and masks that
take in a head's hair and a barcode's quiet zone."""

from __future__ import annotations

import random

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from medrealmm.deid.image import (
    FACE_MARGIN,
    _faces_with,
    badge_boxes,
    barcode_like_boxes,
    box_coverage,
    chat_title_boxes,
    flagged_text_boxes,
    labelled_boxes,
    mask_image,
    place_title_boxes,
)
from medrealmm.deid.image_labels import trailing_label
from medrealmm.deid.ocr import OcrLine
from medrealmm.deid.record import ImageBox
from medrealmm.fonts import require_cjk_font
from medrealmm.testing.demo_corpus import drawing


def _font(size: int = 28) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(require_cjk_font()), size)


def test_a_header_name_beside_an_id_is_read_as_its_own_cell() -> None:
    # OCR glued a stray stroke to the name: read with the ID after it the row is one token
    # soup, read alone the cell is a name.
    row = [
        OcrLine((17, 24, 116, 66), "阝郑晓东", 0.87),
        OcrLine((259, 34, 439, 60), "ID5829301746", 0.99),
    ]
    trace = OcrLine((60, 600, 400, 630), "25mm/s 10mm/mV", 0.99)
    labels = {item.label for item in flagged_text_boxes([*row, trace])}
    assert "NAME" in labels
    # Down a table, a cell alone has no context: a vaccine's name is not read as a person's.
    table = [
        OcrLine((20, 300, 90, 324), "百白破", 0.99),
        OcrLine((220, 300, 280, 324), "第2剂", 0.99),
        OcrLine((320, 300, 440, 324), "2021.05.21", 0.99),
        trace,
    ]
    assert {item.label for item in flagged_text_boxes(table)} == {"DATE"}


def test_a_wechat_account_id_in_a_chat_bubble_is_masked() -> None:
    for text in ("我微信号wxid_k29fj3la7", "我的微信wxid_k29fj3la7", "加 wxid_k29fj3la7"):
        line = OcrLine((0, 0, 40 * len(text), 36), text, 0.99)
        boxes = flagged_text_boxes([line])
        assert boxes, text
        assert max(item.box[2] for item in boxes) >= line.box[2] - 5, text


def _scribble(draw: ImageDraw.ImageDraw, x: int, y: int, width: int, seed: int) -> None:
    """Hand-writing OCR cannot read: a loose polyline, a few strokes high."""
    rng = random.Random(seed)
    points = [(x + i * width // 12, y + rng.randint(0, 26)) for i in range(13)]
    draw.line(points, fill=(30, 30, 90), width=3)


def test_a_handwritten_value_after_an_identifying_label_is_masked_and_noted() -> None:
    img = Image.new("RGB", (900, 260), (250, 250, 247))
    draw = ImageDraw.Draw(img)
    draw.text((30, 40), "姓名：____  床号：", font=_font(), fill=(20, 20, 20))
    label_end = int(draw.textbbox((30, 40), "姓名：____  床号：", font=_font())[2])
    _scribble(draw, label_end + 20, 40, 150, seed=5)
    draw.text((30, 160), "诊断：慢性胃炎，口服奥美拉唑", font=_font(), fill=(20, 20, 20))
    rgb = np.array(img)
    result = mask_image(rgb)
    ink = np.all(rgb < 120, axis=-1)
    ink[:, : label_end + 10] = False
    ink[120:, :] = False
    assert np.all(result.image[ink] == 0)  # every stroke of the scribble
    clinical = (30, 160, 450, 195)
    assert box_coverage(result.image, clinical) < 0.05, result.boxes
    assert any("could not read" in note for note in result.needs_review)


def test_an_unread_box_right_of_a_label_is_its_value() -> None:
    gray = np.full((120, 700), 245, np.uint8)
    label = OcrLine((20, 30, 140, 62), "姓名：张三 床号：", 0.99)
    unread = OcrLine((160, 28, 260, 64), "~", 0.3)
    far = OcrLine((20, 80, 300, 110), "主诉：腹痛三天", 0.99)
    assert trailing_label(label)
    boxes = labelled_boxes([label, far], [unread], gray)
    assert any(item.label == "illegible" and item.box[0] <= 165 for item in boxes)
    # Blank paper after a label with no box is not a value.
    assert not [item for item in labelled_boxes([label], [], gray) if item.label == "illegible"]


def test_a_face_mask_takes_in_the_hair_above_the_detected_box() -> None:
    class Detector:
        def detectMultiScale(self, gray: np.ndarray, **_: object) -> list[tuple[int, ...]]:
            return [(100, 120, 100, 100)]

    _, (face,) = _faces_with("opencv-haar", Detector(), np.zeros((400, 400, 3), np.uint8))
    x0, y0, x1, _ = face.box
    assert y0 <= 120 - 30  # a third of the box above the brows
    assert x0 <= 100 - 15 and x1 >= 215
    assert FACE_MARGIN[1] >= 0.3


def test_an_undecodable_barcode_is_masked_with_its_quiet_zone() -> None:
    page = Image.new("RGB", (600, 300), (250, 250, 247))
    page.paste(drawing._barcode(random.Random(3), 220, 60), (120, 120))
    (found,) = barcode_like_boxes(np.array(page.convert("L")), [])
    assert found.box[0] <= 120 - 15 and found.box[2] >= 340 + 15


def _cell(text: str, x: int, y: int, width: int, height: int = 24) -> OcrLine:
    return OcrLine((x, y, x + width, y + height), text, 0.99)


def test_every_cell_under_a_date_header_of_a_table_is_masked() -> None:
    header = [
        _cell("疫苗名称", 20, 40, 96),
        _cell("剂次", 220, 40, 48),
        _cell("接种日期", 320, 40, 96),
    ]
    rows = []
    for i, (vaccine, when) in enumerate(
        [
            ("乙肝疫苗", "2019.03.04"),
            ("卡介苗", "19-03-04"),
            ("脊灰疫苗", "4月16日"),
            ("百白破", "05-21"),
        ]
    ):
        y = 80 + 40 * i
        rows += [_cell(vaccine, 20, y, 96), _cell(f"第{i + 1}剂", 220, y, 60)]
        rows.append(_cell(when, 320, y, 12 * len(when)))
    boxes = labelled_boxes(header + rows)
    dates = [cell for cell in rows if cell.box[0] == 320]
    for cell in dates:
        assert any(
            item.box[1] <= cell.box[1] and item.box[3] >= cell.box[3] and item.box[0] <= cell.box[0]
            for item in boxes
        ), cell.text
    assert not any(item.box[2] < 300 for item in boxes)  # vaccines and doses stay


def test_under_a_cards_label_the_value_wraps_twice_at_most_not_down_a_column() -> None:
    label = _cell("复诊日期", 20, 40, 96)
    value = _cell("2023-05-04", 20, 70, 120)
    notes = [_cell(text, 20, 104 + 34 * i, 200) for i, text in enumerate(["一", "二", "三"])]
    boxes = labelled_boxes([label, value, *notes])
    assert any(item.box[1] <= 70 for item in boxes)
    assert not any(item.box[3] > notes[2].box[1] for item in boxes)


def test_a_chat_screenshots_navigation_title_is_masked_an_apps_page_title_is_not() -> None:
    clock = _cell("9:41", 24, 20, 70, 40)
    for title, masked in (("快乐小鱼儿", True), ("Sunny", True), ("检验报告详情", False)):
        line = _cell(title, 360 - 12 * len(title), 86, 24 * len(title), 44)
        notice = _cell("以下为新消息", 290, 200, 140)
        boxes = chat_title_boxes([clock, line, notice], 720, 1560)
        assert bool(boxes) is masked, title
        assert all(item.box[3] < 200 for item in boxes)  # the centred notice below stays
    # No status bar: a report's centred heading is not a chat's title.
    assert not chat_title_boxes([_cell("欧阳小雨", 300, 86, 120, 44)], 720, 1560)


def test_a_place_named_over_its_address_in_a_location_card_is_masked() -> None:
    name = _cell("枫林湾购物广场B座", 40, 300, 260, 40)
    address = _cell("江苏省南京市鼓楼区中山北路88号", 40, 346, 320, 28)
    (item,) = place_title_boxes([name, address])
    assert (
        item.kind == "place"
        and item.label == "ADDRESS"
        and item.box[1] <= 300
        and item.box[3] >= 340
    )
    # A sentence wrapped onto the address line is the same size: not a place's name.
    said = _cell("我们家就在", 40, 306, 130, 28)
    assert not place_title_boxes([said, address])


def test_a_name_badge_under_a_face_is_masked_a_blank_dressing_is_not() -> None:
    img = Image.new("L", (800, 900), 200)  # the wall
    draw = ImageDraw.Draw(img)
    draw.rectangle((150, 420, 650, 900), fill=25)  # a dark jacket under the face
    draw.rectangle((200, 560, 330, 600), fill=175)  # the badge
    draw.text((210, 568), "JO KIM", font=_font(22), fill=30)
    draw.rectangle((470, 560, 600, 600), fill=235)  # a blank dressing
    face = ImageBox(kind="face", box=(280, 150, 520, 420))
    found = badge_boxes(np.array(img), [face])
    assert len(found) == 1
    (badge,) = found
    assert badge.box[0] <= 200 and badge.box[2] >= 330 and badge.box[3] >= 600
