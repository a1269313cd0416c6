"""Form labels name the identifier beside them: values are found by the label, not the text."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from medrealmm.deid.image import labelled_boxes, mask_image, signature_boxes
from medrealmm.deid.image_labels import (
    bare_label,
    inline_values,
    institution_span,
    page_angle,
    value_line,
    wrapped,
)
from medrealmm.deid.ocr import OcrLine
from medrealmm.fonts import require_cjk_font


def line(text: str, x: int, y: int, w: int, h: int = 20, turn: float = 0.0) -> OcrLine:
    """An OCR line at (x, y), optionally with the page turned ``turn`` degrees about (0, 0)."""
    a = np.radians(turn)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    pts = [rot @ np.array(p, float) for p in ((x, y), (x + w, y), (x + w, y + h), (x, y + h))]
    quad = tuple((round(float(p[0])), round(float(p[1]))) for p in pts)
    xs, ys = [p[0] for p in quad], [p[1] for p in quad]
    return OcrLine((min(xs), min(ys), max(xs), max(ys)), text, 0.99, quad)


def values(text: str) -> list[str]:
    item = line(text, 0, 0, 20 * len(text))
    return [text[a:b] for a, b in inline_values(item)]


def test_a_value_after_an_identifying_label_stops_at_the_next_label() -> None:
    assert values("姓名：欧阳娜娜 性别：女 年龄：45岁") == ["欧阳娜娜 "]
    assert values("床位：60床性别：男年龄：44岁") == ["60床"]  # OCR drops the spaces
    assert values("送检医生:孙倩 标本:血清 送检日期:2024-05-01") == ["孙倩 ", "2024-05-01"]
    assert values("票据号码：NO.396395206") == ["NO.396395206"]


def test_sentences_and_clinical_fields_are_not_values() -> None:
    assert values("医生您好，请留个电话，方便复诊联系") == []
    assert values("临床诊断：急性荨麻疹") == []
    assert values("性别：男 年龄：44岁 科别：皮肤科") == []
    assert values("单位：mmol/L") == []  # a lab unit; 工作单位 is the employer


def test_a_bare_label_finds_its_value_to_the_right_or_below() -> None:
    label = line("住院号", 10, 100, 60)
    cell = line("958363995", 130, 101, 100)
    assert bare_label(label) and value_line(label, [label, cell]) is cell
    stacked = line("受检者", 30, 200, 50, 16)
    under = line("宇文玉朵", 30, 224, 90, 22)
    other_column = line("收款单位", 380, 200, 64, 16)  # the next cell is a label: look below
    lines = [stacked, under, other_column]
    assert value_line(stacked, lines) is under
    assert not bare_label(line("医生", 0, 0, 40))  # a bare 医生 needs its colon


def test_on_a_turned_page_the_value_is_found_in_the_pages_frame() -> None:
    for turn in (-25.0, 12.0):
        label = line("联系地址", 100, 300, 80, 20, turn)
        value = line("辽宁省齐齐哈尔市前进四条226号", 100, 326, 280, 22, turn)
        ruler = line("白细胞计数 WBC 3.7 10^9/L 3.5-9.5", 100, 400, 420, 20, turn)
        lines = [label, value, ruler]
        assert abs(np.degrees(page_angle(lines)) - turn) < 1.5
        assert value_line(label, lines, page_angle(lines)) is value


def test_institution_names_open_a_line_sentences_do_not() -> None:
    def span(text: str) -> str | None:
        found = institution_span(line(text, 0, 0, 20 * len(text)))
        return text[found[0] : found[1]] if found else None

    assert span("玲县中医医院") == "玲县中医医院"
    assert span("欢市中心医院检验报告单") == "欢市中心医院"
    assert span("我去了市医院看病") is None
    assert span("血常规检查") is None


def test_a_scribble_read_as_a_stray_letter_is_still_a_signature() -> None:
    assert signature_boxes([line("检验者：w", 37, 616, 184, 32)], 760)
    assert signature_boxes([line("检验者：张建国", 37, 616, 184, 32)], 760) == []


def test_labelled_boxes_cover_an_inline_value_to_the_end_of_its_line() -> None:
    item = line("病历号：15433721", 429, 157, 158, 24)
    (box,) = labelled_boxes([item])
    assert box.box[2] >= 587 and box.box[0] >= 429 + 2 * 24


def test_a_rare_name_under_its_label_is_masked_end_to_end() -> None:
    img = Image.new("RGB", (420, 220), (246, 246, 246))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(require_cjk_font()), 22)
    small = ImageFont.truetype(str(require_cjk_font()), 16)
    draw.text((30, 30), "受检者", font=small, fill=(130, 130, 130))
    name = draw.textbbox((30, 56), "宓吉洋", font=font)
    draw.text((30, 56), "宓吉洋", font=font, fill=(20, 20, 20))
    draw.text((30, 120), "诊断", font=small, fill=(130, 130, 130))
    diagnosis = draw.textbbox((30, 146), "慢性胃炎", font=font)
    draw.text((30, 146), "慢性胃炎", font=font, fill=(20, 20, 20))
    masked = mask_image(np.array(img)).image
    x0, y0, x1, y1 = name
    assert np.all(masked[y0:y1, x0:x1] == 0)
    x0, y0, x1, y1 = diagnosis
    assert not np.any(np.all(masked[y0:y1, x0:x1] == 0, axis=-1))


def test_a_dark_themed_app_screen_full_of_text_is_not_a_film() -> None:
    from medrealmm.deid.image import image_kind

    gray = np.full((1000, 540), 30, np.uint8)
    rows = [line(f"就诊人{i}", 36, 100 + 45 * i, 200, 24) for i in range(18)]
    rgb = np.repeat(gray[:, :, None], 3, axis=2)
    assert image_kind(gray, rgb, rows) == "screenshot"
    assert image_kind(gray, rgb, rows[:5]) == "film"  # a few corner lines: still a film


def test_english_labels_count_only_as_whole_words_with_a_colon() -> None:
    assert values("Name: LI Wei  Sex: M  Age: 45") == ["LI Wei  "]
    assert values("PATIENT:ZHANG SAN") == ["ZHANG SAN"]
    assert values("Hotel: 3 nights") == []
    assert values("Name the drug") == []


def test_a_column_header_label_finds_its_value_centred_in_the_row_below() -> None:
    header = [line(text, x, 100, 40) for text, x in (("姓名", 40), ("性别", 160), ("床号", 280))]
    row = [line(text, x, 128, w) for text, x, w in (("欧阳娜娜", 28, 80), ("男", 170, 20))]
    lines = header + row
    assert value_line(header[0], lines) is row[0]
    assert value_line(header[2], lines) is None  # nothing under it: nothing guessed


def test_a_value_split_by_ocr_at_a_wide_space_is_masked_to_its_last_box() -> None:
    label = line("家庭住址：河南省澳门市", 20, 100, 220)
    rest = line("和平寇街Q座", 262, 101, 120)
    next_field = line("性别：女", 420, 100, 80)
    clinical = line("空腹血糖 6.1 mmol/L", 20, 140, 200)
    boxes = labelled_boxes([label, rest, next_field, clinical])
    assert any(b.box[0] <= 262 and b.box[2] >= 382 for b in boxes)
    assert not any(b.box[2] > 420 for b in boxes)  # stops at the next label
    assert not any(b.box[3] > 140 for b in boxes)  # and stays on its row


def test_labels_justified_with_spaces_are_still_labels() -> None:
    assert values("姓  名：宓吉洋  性  别：男") == ["宓吉洋  "]
    assert values("住 院 号 : ZY3345121") == ["ZY3345121"]
    assert bare_label(line("床   号", 0, 0, 60))


def test_a_long_value_under_its_label_is_followed_onto_its_wrapped_line() -> None:
    label = line("联系地址", 36, 200, 64, 16)
    first = line("内蒙古自治区宜昌市新华条", 36, 224, 260, 22)
    second = line("851号3单元402室", 36, 250, 170, 22)
    next_label = line("诊断", 36, 300, 32, 16)
    diagnosis = line("慢性胃炎", 36, 322, 90, 22)
    boxes = labelled_boxes([label, first, second, next_label, diagnosis])
    assert any(b.box[1] <= 250 and b.box[3] >= 272 for b in boxes)
    assert not any(b.box[3] > 300 for b in boxes)


def test_the_nearest_row_under_a_label_wins_over_a_better_centred_one_further_down() -> None:
    label = line("地址", 33, 121, 37, 23)
    first = line("四川省清远市西塞路332", 35, 147, 217, 26)
    wrap = line("号", 35, 173, 24, 30)
    assert value_line(label, [label, first, wrap]) is first
    assert wrapped(first, [label, first, wrap]) == [wrap]


def test_prescription_sign_off_and_numbering_fields() -> None:
    assert values("审核：李建国 调配：王芳 核对：赵敏 发药：孙倩") == [
        "李建国 ",
        "王芳 ",
        "赵敏 ",
        "孙倩",
    ]
    assert values("处方编号：CF20240611007") == ["CF20240611007"]
    assert values("日期：2024-06-11") == ["2024-06-11"]
    assert values("发病时间：3天") == []  # a duration, not a date
    assert values("请您审核一下结果") == []


def test_a_value_in_running_text_ends_at_its_clause() -> None:
    assert values("患者：张三，男，45岁，住院号：1234567。") == ["张三", "1234567"]
