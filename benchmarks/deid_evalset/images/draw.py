"""Image evaluation set: real-looking layouts drawn with PIL, identities from Faker zh_CN.

Written apart from the library's demo drawings (different layouts, codes made by zxing-cpp)
so the masker is not measured on pictures made by its own code. Each family has two layout
variants: variant 0 is the dev half (the only one rules were tuned on), variant 1 the test
half, with other seeds. Nothing is written to disk: images are drawn when measured.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache

import numpy as np
from faker import Faker
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from medrealmm.fonts import require_cjk_font

Quad = list[tuple[float, float]]
BoxT = tuple[float, float, float, float]
LABS = [
    ("白细胞计数", "WBC", "10^9/L", (3.5, 9.5)),
    ("红细胞计数", "RBC", "10^12/L", (4.3, 5.8)),
    ("血红蛋白", "HGB", "g/L", (130, 175)),
    ("血小板计数", "PLT", "10^9/L", (125, 350)),
    ("谷丙转氨酶", "ALT", "U/L", (9, 50)),
    ("肌酐", "CREA", "μmol/L", (57, 111)),
    ("空腹血糖", "GLU", "mmol/L", (3.9, 6.1)),
    ("总胆固醇", "TC", "mmol/L", (2.8, 5.2)),
]
DRUGS = ["阿莫西林胶囊 0.5g", "布洛芬缓释胶囊 0.3g", "奥美拉唑肠溶胶囊 20mg", "氯雷他定片 10mg"]
SYMPTOMS = [
    "医生您好，我胳膊上起了红疹，已经三天了",
    "晚上痒得更厉害，抓破了有点渗液",
    "之前没有过敏史",
]


@dataclass
class Sample:
    name: str
    kind: str
    image: np.ndarray
    ids: list[Quad] = field(default_factory=list)
    clinical: list[Quad] = field(default_factory=list)


# Faces of the packaged Noto CJK collection: 2 is Sans SC, 7 is Sans Mono SC.
SANS, MONO = 2, 7


@cache
def _font(size: int, face: int = SANS) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(require_cjk_font()), size, index=face)


class Canvas:
    def __init__(
        self, size: tuple[int, int], colour: tuple[int, int, int], face: int = SANS, bold: int = 0
    ) -> None:
        self.img = Image.new("RGB", size, colour)
        self.draw = ImageDraw.Draw(self.img)
        self.ids: list[BoxT] = []
        self.clinical: list[BoxT] = []
        self.face, self.bold = face, bold

    def text(self, xy: tuple[int, int], s: str, size: int, fill: object = (20, 20, 20)) -> BoxT:
        font = _font(size, self.face)
        self.draw.text(xy, s, font=font, fill=fill, stroke_width=self.bold, stroke_fill=fill)  # type: ignore[arg-type]
        return self.draw.textbbox(xy, s, font=font, stroke_width=self.bold)

    def field(self, xy: tuple[int, int], label: str, value: str, size: int) -> int:
        box = self.text(xy, label, size)
        vbox = self.text((int(box[2]) + 4, xy[1]), value, size)
        self.ids.append(vbox)
        return int(vbox[2])


def _barcode(value: str, scale: int) -> Image.Image:
    import zxingcpp

    code = zxingcpp.create_barcode(value, zxingcpp.BarcodeFormat.Code128)
    return Image.fromarray(np.array(zxingcpp.write_barcode_to_image(code, scale=scale))).convert(
        "RGB"
    )


def _stamp(c: Canvas, centre: tuple[int, int], r: int, text: str) -> None:
    x, y = centre
    red = (200, 35, 40)
    c.draw.ellipse((x - r, y - r, x + r, y + r), outline=red, width=4)
    star = [(x + r * 0.25 * np.cos(a), y + r * 0.25 * np.sin(a)) for a in np.linspace(0, 6.28, 6)]
    c.draw.polygon(star, fill=red)
    f = _font(max(10, r // 4))
    c.draw.text((x - r * 0.7, y + r * 0.35), text[:6], font=f, fill=red)
    c.ids.append((x - r, y - r, x + r, y + r))


def _scribble(c: Canvas, x: int, y: int, rng: random.Random, ink: tuple[int, int, int]) -> None:
    pts = [(x + 6 * i, y + rng.randint(-8, 8)) for i in range(18)]
    c.draw.line(pts, fill=ink, width=2)
    c.ids.append((x - 2, y - 10, x + 6 * 17 + 2, y + 10))


def lab_report(fake: Faker, rng: random.Random, variant: int) -> Canvas:
    c = Canvas((760, 980), (252, 252, 250))
    hospital = fake.city() + ("人民医院" if variant == 0 else "第一附属医院")
    c.ids.append(c.text((150 if variant == 0 else 200, 28), hospital, 30))
    c.text((300, 72), "检验报告单", 24)
    y = 120
    size = 18
    if variant == 0:
        x = c.field((30, y), "姓名：", fake.name(), size)
        c.text((x + 40, y), f"性别：{rng.choice('男女')}  年龄：{rng.randint(18, 85)}岁", size)
        c.field((30, y + 34), "身份证号：", fake.ssn(), size)
        c.field((430, y + 34), "病历号：", str(rng.randint(10**7, 10**8)), size)
        c.field((30, y + 68), "电话：", fake.phone_number(), size)
        code_at = (520, 40)
    else:
        c.draw.rectangle((24, y - 6, 736, y + 92), outline=(90, 90, 90))
        c.field((32, y), "患者姓名 ", fake.name(), size)
        c.field((300, y), "住院号 ", f"ZY{rng.randint(10**6, 10**7)}", size)
        c.field((32, y + 30), "联系电话 ", fake.phone_number(), size)
        c.field((300, y + 30), "家庭住址 ", fake.address()[:14], size)
        c.field((32, y + 60), "送检日期 ", fake.date(pattern="%Y-%m-%d"), size)
        code_at = (40, 860)
    code = _barcode(str(rng.randint(10**9, 10**10)), 2)
    c.img.paste(code, code_at)
    c.ids.append((code_at[0], code_at[1], code_at[0] + code.width, code_at[1] + code.height))
    top = 250
    c.text((40, top), "项目            结果      单位        参考范围", 18)
    for i, (name, abbr, unit, (lo, hi)) in enumerate(rng.sample(LABS, 6)):
        value = round(rng.uniform(lo * 0.8, hi * 1.2), 1)
        row = f"{name}({abbr})  {value}  {unit}  {lo}-{hi}"
        c.clinical.append(c.text((40, top + 40 + 36 * i), row, 18))
    foot = 620 if variant == 0 else 700
    c.text((40, foot), "检验者：", 18)
    _scribble(c, 120, foot + 12, rng, (30, 40, 150))
    c.text((380, foot), "审核者：", 18)
    _scribble(c, 460, foot + 12, rng, (20, 20, 20))
    _stamp(c, (600, foot + 120), 60, fake.city() + "医院检验科")
    return c


def prescription(fake: Faker, rng: random.Random, variant: int) -> Canvas:
    c = Canvas((640, 860), (250, 248, 240) if variant == 0 else (255, 255, 255))
    c.ids.append(c.text((120, 24), fake.city() + "中医医院", 28))
    c.text((250, 66), "处 方 笺", 24)
    size = 18
    x = c.field((30, 120), "姓名：", fake.name(), size)
    c.text((x + 30, 120), f"年龄：{rng.randint(2, 90)}岁", size)
    c.field((30, 154), "门诊号：", str(rng.randint(10**8, 10**9)), size)
    c.field((330, 154), "电话：", fake.phone_number(), size)
    if variant == 1:
        c.field((30, 188), "住址：", fake.address()[:16], size)
    c.clinical.append(c.text((30, 230), "临床诊断：急性荨麻疹", 20))
    c.text((30, 280), "Rp.", 26)
    for i, drug in enumerate(rng.sample(DRUGS, 3)):
        c.clinical.append(c.text((70, 330 + 48 * i), f"{drug} ×{rng.randint(1, 3)}盒 口服", 20))
    c.text((30, 720), "医师：", 18)
    _scribble(c, 90, 732, rng, (25, 35, 160))
    _stamp(c, (500, 740), 55, "处方专用章")
    return c


def chat(fake: Faker, rng: random.Random, variant: int) -> Canvas:
    bg = (237, 237, 237) if variant == 0 else (245, 246, 248)
    c = Canvas((540, 960), bg)
    c.text((20, 8), "9:41", 18)
    c.draw.rectangle((0, 40, 540, 100), fill=(247, 247, 247))
    name = c.text((200, 56), fake.name(), 22)
    c.ids.append(name)
    c.text((int(name[2]) + 2, 56), "医生", 22)
    y = 130
    msgs = [(True, s) for s in SYMPTOMS] + [(False, "请留个电话，方便复诊联系")]
    msgs.append((True, f"好的，我的电话是{fake.phone_number()}"))
    for mine, text in msgs:
        f = _font(20)
        w = int(c.draw.textlength(text, font=f))
        lines = [text] if w < 340 else [text[: len(text) // 2], text[len(text) // 2 :]]
        w = min(w, 340) + 24
        h = 34 * len(lines) + 10
        x = 540 - 80 - w if mine else 80
        colour = (149, 236, 105) if mine else (255, 255, 255)
        if variant == 1 and mine:
            colour = (88, 150, 250)
        c.draw.rounded_rectangle((x, y, x + w, y + h), radius=8, fill=colour)
        avatar = (540 - 66, y, 540 - 20, y + 46) if mine else (20, y, 66, y + 46)
        c.draw.rectangle(avatar, fill=(rng.randint(60, 200), 120, rng.randint(60, 200)))
        ink = (255, 255, 255) if colour == (88, 150, 250) else (20, 20, 20)
        for i, line in enumerate(lines):
            box = c.text((x + 12, y + 8 + 34 * i), line, 20, ink)
            digits = [j for j, ch in enumerate(line) if ch.isdigit()]
            if digits and "电话是" in text:
                lo = c.draw.textlength(line[: digits[0]], font=f)
                c.ids.append((box[0] + lo, box[1], box[2], box[3]))
            elif mine:
                c.clinical.append(box)
        y += h + 30
    return c


def film(fake: Faker, rng: random.Random, variant: int) -> Canvas:
    c = Canvas((640, 640), (6, 6, 6))
    white = (235, 235, 235)
    if variant == 0:
        c.draw.ellipse((140, 130, 500, 520), fill=(95, 95, 95))
        c.draw.ellipse((250, 260, 360, 360), fill=(150, 150, 150))
        c.clinical.append((140, 130, 500, 520))
        c.ids.append(c.text((10, 8), fake.name(), 16, white))
        c.ids.append(c.text((10, 30), f"ID: {rng.randint(10**6, 10**7)}", 16, white))
        c.ids.append(c.text((470, 8), fake.date(pattern="%Y-%m-%d"), 16, white))
        c.ids.append(c.text((440, 30), fake.city() + "医院", 16, white))
        c.text((10, 610), "W:400 L:40", 16, white)
        c.clinical.append(c.text((370, 300), f"{rng.uniform(8, 40):.1f} mm", 16, white))
    else:
        c.draw.pieslice((60, -260, 580, 560), 55, 125, fill=(70, 70, 70))
        c.draw.ellipse((260, 300, 380, 380), fill=(20, 20, 20))
        c.clinical.append((150, 150, 490, 560))
        c.ids.append(c.text((10, 8), f"Pat: {fake.name()}", 16, white))
        c.ids.append(c.text((240, 8), fake.city() + "妇幼保健院", 16, white))
        c.ids.append(c.text((470, 30), fake.date(pattern="%Y/%m/%d"), 16, white))
        c.text((560, 300), "16cm", 16, white)
        c.clinical.append(c.text((270, 400), f"D1 {rng.uniform(10, 40):.2f}cm", 16, white))
        c.clinical.append(c.text((20, 560), f"HR {rng.randint(110, 160)}bpm", 16, white))
    return c


def skin(fake: Faker, rng: random.Random, variant: int) -> Canvas:
    back = (232, 232, 228) if variant == 0 else (205, 160, 135)
    c = Canvas((640, 480), back)
    arr = np.array(c.img).astype(float)
    if variant == 0:
        c.draw.ellipse((120, 80, 520, 420), fill=(214, 168, 140))
    noise = np.random.default_rng(rng.randint(0, 999)).normal(0, 6, arr.shape)
    c.img = Image.fromarray(np.clip(np.array(c.img) + noise, 0, 255).astype(np.uint8))
    c.draw = ImageDraw.Draw(c.img)
    x, y = rng.randint(220, 320), rng.randint(170, 240)
    c.draw.ellipse((x, y, x + 90, y + 70), fill=(150, 60, 60))
    c.clinical.append((x, y, x + 90, y + 70))
    c.img = c.img.filter(ImageFilter.GaussianBlur(1.2))
    return c


FAMILIES: dict[str, tuple[str, Callable[[Faker, random.Random, int], Canvas]]] = {
    "lab_report": ("document", lab_report),
    "prescription": ("document", prescription),
    "chat": ("screenshot", chat),
    "film": ("film", film),
    "skin": ("photo", skin),
}


def _photograph(c: Canvas, rng: random.Random) -> tuple[Image.Image, Callable[[BoxT], Quad]]:
    """The page on a table, shot at an angle: turned 5-30 degrees, a little keystone from the
    camera's tilt, uneven light, blur and JPEG."""
    import cv2

    angle = rng.choice([-1, 1]) * rng.uniform(5, 30)
    w, h = c.img.size
    table = Image.new("RGB", (w + 240, h + 240), (120 + rng.randint(0, 40), 90, 60))
    table.paste(c.img, (120, 120))
    tw, th = table.size
    turn = np.vstack([cv2.getRotationMatrix2D((tw / 2, th / 2), angle, 1.0), [0, 0, 1]])
    corners = np.float32([[0, 0], [tw, 0], [tw, th], [0, th]])
    jitter = np.float32(
        [[rng.uniform(-1, 1) * 0.04 * tw, rng.uniform(-1, 1) * 0.04 * th] for _ in range(4)]
    )
    keystone = cv2.getPerspectiveTransform(corners, corners + jitter)
    matrix = keystone @ turn
    shot = cv2.warpPerspective(np.array(table), matrix, (tw, th), borderValue=(110, 85, 60))
    # Light falls off across the frame in a random direction.
    yy, xx = np.mgrid[0:th, 0:tw].astype(np.float32)
    theta = rng.uniform(0, 2 * np.pi)
    ramp = (xx * np.cos(theta) + yy * np.sin(theta)) / max(tw, th)
    ramp = (ramp - ramp.min()) / max(1e-6, float(ramp.max() - ramp.min()))
    shade = rng.uniform(0.7, 0.9) + (1.05 - rng.uniform(0.7, 0.9)) * ramp
    shot = np.clip(shot.astype(np.float32) * shade[:, :, None], 0, 255).astype(np.uint8)

    def to_quad(box: BoxT) -> Quad:
        pts = np.float32(
            [
                [
                    (box[0] + 120, box[1] + 120),
                    (box[2] + 120, box[1] + 120),
                    (box[2] + 120, box[3] + 120),
                    (box[0] + 120, box[3] + 120),
                ]
            ]
        )
        return [(float(x), float(y)) for x, y in cv2.perspectiveTransform(pts, matrix)[0]]

    img = Image.fromarray(shot).filter(ImageFilter.GaussianBlur(0.8))
    buffer = io.BytesIO()
    img.save(buffer, format="JPEG", quality=rng.randint(70, 88))
    return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB"), to_quad


def _flat(box: BoxT) -> Quad:
    return [(box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3])]


def _jpeg(c: Canvas, rng: random.Random) -> Image.Image:
    """A flat scan or forwarded screenshot: grain and heavy JPEG, no turn."""
    arr = np.array(c.img).astype(float)
    arr += np.random.default_rng(rng.randint(0, 999)).normal(0, 5, arr.shape)
    img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    buffer = io.BytesIO()
    img.save(buffer, format="JPEG", quality=rng.randint(45, 70))
    return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")


def families() -> dict[str, tuple[str, Callable[[Faker, random.Random, int], Canvas]]]:
    from forms import inline_header, receipt, stacked_card, table_form

    return FAMILIES | {
        "table_form": ("document", table_form),
        "stacked_card": ("screenshot", stacked_card),
        "inline_header": ("document", inline_header),
        "receipt": ("document", receipt),
    }


def samples(split: str, per_family: int = 5) -> Iterator[Sample]:
    """Per family: plain drawings, one grainy JPEG (pages and screens), and for pages the
    last one photographed on a table."""
    variant = 0 if split == "dev" else 1
    for fi, (family, (kind, draw)) in enumerate(families().items()):
        for i in range(per_family):
            seed = 1000 * variant + 10 * fi + i
            fake = Faker("zh_CN")
            fake.seed_instance(seed)
            rng = random.Random(seed)
            c = draw(fake, rng, variant)
            img, quad, name_kind = c.img, _flat, kind
            if kind == "document" and i == per_family - 1:
                img, quad = _photograph(c, rng)
                name_kind = "photographed"
            elif kind in ("document", "screenshot") and i == 1:
                img = _jpeg(c, rng)
            yield Sample(
                name=f"{family}-{variant}-{i}",
                kind=name_kind,
                image=np.array(img),
                ids=[quad(b) for b in c.ids],
                clinical=[quad(b) for b in c.clinical],
            )
