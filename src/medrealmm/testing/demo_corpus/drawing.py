"""Draw the demo corpus's images, recording the box of every identifier drawn.

The boxes are ground truth for image de-identification tests: a masker passes if every box
ends up covered by solid black.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

from medrealmm.fonts import require_cjk_font
from medrealmm.testing.demo_corpus.identities import Identity

Box = tuple[int, int, int, int]


@dataclass
class DrawnImage:
    image: Image.Image
    pii_boxes: dict[str, list[Box]] = field(default_factory=dict)
    exif: bytes | None = None

    def add(self, kind: str, box: Box) -> None:
        self.pii_boxes.setdefault(kind, []).append(box)


def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(require_cjk_font()), size)


def _text(
    draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, size: int, fill: str = "black"
) -> Box:
    font = _font(size)
    draw.text(xy, text, font=font, fill=fill)
    left, top, right, bottom = draw.textbbox(xy, text, font=font)
    return (left, top, right, bottom)


def _qr(data: str, size: int) -> Image.Image:
    import qrcode  # only needed when regenerating the bundled corpus

    qr = qrcode.QRCode(border=2, box_size=4)
    qr.add_data(data)
    qr.make(fit=True)
    return (
        qr.make_image(fill_color="black", back_color="white")
        .get_image()
        .convert("RGB")
        .resize((size, size), Image.NEAREST)
    )


def _barcode(rng: random.Random, width: int, height: int) -> Image.Image:
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    x = 4
    while x < width - 6:
        bar = rng.choice((1, 2, 3))
        draw.rectangle((x, 2, x + bar - 1, height - 3), fill="black")
        x += bar + rng.choice((1, 2, 3))
    return img


def lab_report(
    rng: random.Random, who: Identity, title: str, rows: list[tuple[str, str, str, str]]
) -> DrawnImage:
    img = Image.new("RGB", (720, 900), (250, 250, 247))
    draw = ImageDraw.Draw(img)
    out = DrawnImage(img)
    # Hospital logo: a red cross in a circle, then the header.
    draw.ellipse((30, 24, 90, 84), outline=(190, 30, 30), width=4)
    draw.rectangle((54, 34, 66, 74), fill=(190, 30, 30))
    draw.rectangle((40, 48, 80, 60), fill=(190, 30, 30))
    out.add("logo", (30, 24, 91, 85))
    out.add("hospital", _text(draw, (110, 30), who.hospital, 30))
    _text(draw, (260, 80), title, 26)
    draw.line((30, 125, 690, 125), fill="black", width=2)
    _text(draw, (40, 140), "姓名：", 20)
    out.add("name", _text(draw, (100, 140), who.name, 20))
    _text(draw, (260, 140), f"性别：{rng.choice('男女')}   年龄：{rng.randint(18, 80)}岁", 20)
    _text(draw, (40, 175), "身份证号：", 20)
    out.add("id", _text(draw, (140, 175), who.resident_id, 20))
    _text(draw, (40, 210), "病历号：", 20)
    out.add("mrn", _text(draw, (120, 210), who.mrn, 20))
    _text(draw, (380, 210), "采样日期：", 20)
    out.add("date", _text(draw, (480, 210), who.visit_date, 20))
    draw.line((30, 250, 690, 250), fill="black", width=1)
    y = 265
    for label, value, unit, ref in [("项目", "结果", "单位", "参考范围"), *rows]:
        _text(draw, (40, y), label, 20)
        _text(draw, (300, y), value, 20)
        _text(draw, (420, y), unit, 20)
        _text(draw, (560, y), ref, 20)
        y += 38
    draw.line((30, y + 10, 690, y + 10), fill="black", width=1)
    qr = _qr(who.url, 120)
    img.paste(qr, (560, 740))
    out.add("qr", (560, 740, 680, 860))
    bar = _barcode(rng, 220, 60)
    img.paste(bar, (40, 780))
    out.add("barcode", (40, 780, 260, 840))
    _text(draw, (300, 800), "检验者：", 20)
    # A scribbled signature.
    points = [(390 + i * 9, 808 + rng.randint(-8, 8)) for i in range(14)]
    draw.line(points, fill=(20, 20, 120), width=3)
    out.add("signature", (385, 796, 525, 822))
    return out


def prescription(rng: random.Random, who: Identity, drugs: list[str]) -> DrawnImage:
    img = Image.new("RGB", (640, 820), (255, 253, 240))
    draw = ImageDraw.Draw(img)
    out = DrawnImage(img)
    out.add("hospital", _text(draw, (40, 30), who.hospital, 28))
    _text(draw, (250, 75), "处 方 笺", 28)
    _text(draw, (40, 130), "姓名：", 20)
    out.add("name", _text(draw, (100, 130), who.name, 20))
    _text(draw, (40, 165), "电话：", 20)
    out.add("phone", _text(draw, (100, 165), who.phone, 20))
    _text(draw, (40, 200), "医保卡号：", 20)
    out.add("insurance", _text(draw, (140, 200), who.insurance, 20))
    _text(draw, (40, 250), "Rp.", 26)
    y = 300
    for drug in drugs:
        _text(draw, (70, y), drug, 22)
        y += 44
    _text(draw, (330, 700), "医师签名：", 20)
    points = [(440 + i * 10, 712 + rng.randint(-9, 9)) for i in range(13)]
    draw.line(points, fill=(30, 30, 30), width=3)
    out.add("signature", (435, 698, 565, 726))
    qr = _qr(who.order_id, 90)
    img.paste(qr, (40, 690))
    out.add("qr", (40, 690, 130, 780))
    return out


def skin_photo(rng: random.Random, who: Identity) -> DrawnImage:
    base = (rng.randint(205, 230), rng.randint(160, 185), rng.randint(135, 155))
    img = Image.new("RGB", (640, 480), base)
    draw = ImageDraw.Draw(img)
    for _ in range(rng.randint(3, 7)):
        cx, cy = rng.randint(120, 520), rng.randint(100, 380)
        rx, ry = rng.randint(20, 70), rng.randint(15, 50)
        tone = (rng.randint(170, 210), rng.randint(70, 110), rng.randint(70, 100))
        draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=tone)
        for _ in range(12):
            px, py = cx + rng.randint(-rx, rx), cy + rng.randint(-ry, ry)
            draw.ellipse((px - 3, py - 3, px + 3, py + 3), fill=(240, 230, 220))
    img = img.filter(ImageFilter.GaussianBlur(2))
    exif = Image.Exif()
    exif[0x010F] = "DemoPhone"  # Make
    exif[0x0110] = "DP-1"  # Model
    exif[0x0132] = "2025:06:01 10:11:12"  # DateTime
    exif[0x013B] = who.name  # Artist: an identifier hiding in metadata
    return DrawnImage(img, exif=exif.tobytes())


def ct_film(rng: random.Random, who: Identity) -> DrawnImage:
    img = Image.new("RGB", (800, 800), (8, 8, 8))
    draw = ImageDraw.Draw(img)
    out = DrawnImage(img)
    draw.ellipse((150, 170, 650, 630), fill=(90, 90, 90))
    draw.ellipse((210, 240, 390, 560), fill=(30, 30, 30))
    draw.ellipse((410, 240, 590, 560), fill=(30, 30, 30))
    draw.ellipse((370, 360, 430, 460), fill=(200, 200, 200))
    nod = (rng.randint(250, 330), rng.randint(300, 420))
    draw.ellipse((nod[0] - 8, nod[1] - 8, nod[0] + 8, nod[1] + 8), fill=(120, 120, 120))
    # Burnt-in overlay text in the corners, as DICOM viewers render it.
    pinyin = f"PATIENT^{rng.randint(1000, 9999)}"
    out.add("overlay", _text(draw, (16, 12), pinyin, 18, fill="white"))
    out.add("overlay", _text(draw, (16, 40), f"ID:{who.mrn}", 18, fill="white"))
    out.add("hospital", _text(draw, (480, 12), who.hospital, 18, fill="white"))
    out.add("overlay", _text(draw, (16, 760), who.visit_date, 18, fill="white"))
    _text(draw, (640, 760), "W:1500 L:-600", 16, fill="white")
    return out


def save(drawn: DrawnImage, path: Path) -> None:
    """Write deterministically: fixed encoder settings, EXIF only where planted."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    if path.suffix == ".jpg":
        kwargs = {"quality": 88, "optimize": False}
        if drawn.exif:
            kwargs["exif"] = drawn.exif
        drawn.image.save(buffer, format="JPEG", **kwargs)
    else:
        drawn.image.save(buffer, format="PNG", optimize=False, compress_level=6)
    path.write_bytes(buffer.getvalue())
