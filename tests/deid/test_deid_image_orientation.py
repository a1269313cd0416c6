"""Pages photographed sideways or upside down, grid films and wristbands: drawn here."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from medrealmm.deid.image import mask_image
from medrealmm.deid.ocr import read_page, turn_points
from medrealmm.fonts import require_cjk_font

Box = tuple[int, int, int, int]


def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(require_cjk_font()), size)


def _black(rgb: np.ndarray, box: Box) -> float:
    x0, y0, x1, y1 = box
    return float(np.mean(np.all(rgb[y0:y1, x0:x1] == 0, axis=-1)))


def _record() -> tuple[np.ndarray, dict[str, Box], Box]:
    """A discharge record: identifying values after their labels, one clinical line."""
    page = Image.new("RGB", (760, 420), (250, 250, 248))
    draw = ImageDraw.Draw(page)
    font = _font(26)
    values: dict[str, Box] = {}
    rows = [
        ("姓名：", "欧阳明轩", "  性别：男  年龄：45岁"),
        ("住院号：", "ZY20240611", ""),
        ("联系电话：", "13912345678", ""),
    ]
    y = 40
    for label, value, rest in rows:
        draw.text((40, y), label, font=font, fill=(20, 20, 20))
        x = 40 + draw.textlength(label, font=font)
        values[value] = tuple(int(v) for v in draw.textbbox((x, y), value, font=font))  # type: ignore[assignment]
        draw.text((x, y), value + rest, font=font, fill=(20, 20, 20))
        y += 60
    text = "出院诊断：2型糖尿病，高血压2级，二甲双胍0.5g bid"
    draw.text((40, y + 30), text, font=font, fill=(20, 20, 20))
    clinical = tuple(int(v) for v in draw.textbbox((40, y + 30), text, font=font))
    return np.array(page), values, clinical  # type: ignore[return-value]


@pytest.mark.parametrize("turns", [1, 2, 3])
def test_a_turned_page_is_read_upright_and_masked_along_its_lines(turns: int) -> None:
    rgb, values, clinical = _record()
    turned = np.ascontiguousarray(np.rot90(rgb, turns))
    page = read_page(turned)
    assert (turns + page.turns) % 4 == 0  # the turn that stands it upright again
    assert any("欧阳明轩" in line.text for line in page.lines)
    masked = np.rot90(mask_image(turned).image, -turns)  # back in the drawn frame
    for value, box in values.items():
        assert _black(masked, box) >= 0.98, value
    # The masks follow the lines: none spills across the clinical line.
    assert _black(masked, clinical) < 0.02


def test_turning_points_matches_numpy() -> None:
    img = np.zeros((30, 50), np.uint8)
    img[5, 40] = 1  # the pixel whose centre is (40.5, 5.5)
    for turns in range(4):
        ((x, y),) = turn_points(np.array([[40.5, 5.5]]), turns, 50, 30)
        assert np.rot90(img, turns)[int(y), int(x)] == 1


def _grid_film() -> tuple[np.ndarray, dict[str, Box], list[Box], list[Box]]:
    """A 2x2 MRI film: identifiers in the first panels' corners, slice numbers and
    window settings in the others', grey anatomy in every panel."""
    film = Image.new("RGB", (900, 900), (6, 6, 6))  # no pure black: that means masked
    draw = ImageDraw.Draw(film)
    font = _font(20)
    panels: list[Box] = []
    for row in range(2):
        for col in range(2):
            x0, y0 = 10 + col * 445, 10 + row * 445
            draw.rectangle((x0, y0, x0 + 435, y0 + 435), outline=(60, 60, 60))
            cx, cy = x0 + 218, y0 + 250
            draw.ellipse((cx - 110, cy - 120, cx + 110, cy + 120), fill=(130, 130, 130))
            draw.ellipse((cx - 70, cy - 90, cx + 70, cy + 90), fill=(175, 175, 175))
            draw.ellipse((cx - 15, cy - 15, cx + 15, cy + 15), fill=(240, 240, 240))
            panels.append((cx - 110, cy - 120, cx + 110, cy + 120))
    ids: dict[str, Box] = {}
    for text, xy in (
        ("司马青云", (20, 20)),
        ("ID 58213376", (20, 54)),
        ("F 37Y 2025.03.14", (20, 88)),
        ("仁济东院影像科", (465, 20)),
    ):
        draw.text(xy, text, font=font, fill=(230, 230, 230))
        ids[text] = tuple(int(v) for v in draw.textbbox(xy, text, font=font))  # type: ignore[assignment]
    kept: list[Box] = []
    for text, xy in (
        ("T2WI AX", (465, 54)),
        ("Im:12", (380, 410)),
        ("Im:15", (825, 410)),
        ("W:400 L:40", (20, 855)),
        ("10mm", (825, 855)),
    ):
        draw.text(xy, text, font=font, fill=(230, 230, 230))
        kept.append(tuple(int(v) for v in draw.textbbox(xy, text, font=font)))  # type: ignore[arg-type]
    return np.array(film), ids, panels, kept


def test_a_grid_film_loses_its_corner_identifiers_but_keeps_panels_and_settings() -> None:
    rgb, ids, panels, kept = _grid_film()
    result = mask_image(rgb)
    for text, box in ids.items():
        assert _black(result.image, box) >= 0.98, text
    for box in panels:
        assert _black(result.image, box) < 0.01
    for box in kept:
        assert _black(result.image, box) < 0.05
    assert not any(item.kind == "face" for item in result.boxes)


def test_a_wristband_loses_its_name_id_and_barcode_but_not_the_arm() -> None:
    zxingcpp = pytest.importorskip("zxingcpp")
    arm = Image.new("RGB", (1000, 560), (205, 160, 130))
    band = Image.new("RGB", (820, 120), (250, 250, 252))
    draw = ImageDraw.Draw(band)
    font = _font(26)
    draw.text((20, 14), "夏侯婉清", font=font, fill=(20, 20, 20))
    draw.text((160, 14), "女  46岁", font=font, fill=(20, 20, 20))
    draw.text((20, 62), "住院号：Z96899814", font=font, fill=(20, 20, 20))
    bars = zxingcpp.create_barcode("Z96899814", zxingcpp.BarcodeFormat.Code128)
    code = Image.fromarray(np.array(zxingcpp.write_barcode_to_image(bars, scale=2)))
    code = code.convert("RGB").resize((code.width, 80))
    band.paste(code, (800 - code.width, 20))
    arm.paste(band, (90, 220))
    photo = np.array(arm.rotate(6, fillcolor=(205, 160, 130), resample=Image.Resampling.BICUBIC))
    result = mask_image(photo)
    black = np.all(result.image == 0, axis=-1)
    skin = np.ones(black.shape, bool)
    skin[200:380, 70:930] = False  # the band and a margin round it (turned by 6 degrees)
    assert float(black[skin].mean()) < 0.01
    assert float(black.mean()) < 0.2
    assert any(item.kind == "barcode" for item in result.boxes)

    def on_photo(
        x: float, y: float
    ) -> tuple[int, int]:  # band → photo (turned 6° about the centre)
        a, cx, cy = np.radians(6), 500, 280
        dx, dy = x + 90 - cx, y + 220 - cy
        return round(cx + dx * np.cos(a) + dy * np.sin(a)), round(
            cy - dx * np.sin(a) + dy * np.cos(a)
        )

    for x, y in ((40, 30), (120, 30), (150, 78), (230, 78), (800 - code.width // 2, 60)):
        px, py = on_photo(x, y)  # the name, the number and the barcode
        assert black[py - 3 : py + 4, px - 3 : px + 4].all(), (x, y)
    px, py = on_photo(260, 30)  # the age stays
    assert not black[py - 3 : py + 4, px - 3 : px + 4].any()


def test_coloured_words_in_the_letterhead_are_text_not_a_logo() -> None:
    from medrealmm.deid.image import colour_mark_boxes
    from medrealmm.deid.ocr import OcrLine

    page = Image.new("RGB", (600, 500), (250, 250, 247))
    draw = ImageDraw.Draw(page)
    draw.text((40, 20), "主诉：咳嗽", font=_font(40), fill=(30, 50, 170))  # blue ink, bold
    box = tuple(int(v) for v in draw.textbbox((40, 20), "主诉：咳嗽", font=_font(40)))
    line = OcrLine(box, "主诉：咳嗽", 0.99)  # type: ignore[arg-type]
    assert colour_mark_boxes(np.array(page), [line]) == []
    assert colour_mark_boxes(np.array(page), [])  # unread, the same ink is a mark
