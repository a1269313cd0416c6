"""More layouts for the image set: table-cell header blocks, labels above their values, dense
one-line headers in small type, fee receipts and app cards in light and dark themes.

Identities come from two independent generators (Faker zh_CN and mimesis), label wording from
a pool of synonyms, so no layout repeats one phrasing. Variant 0 is dev, variant 1 test.
"""

from __future__ import annotations

import random

from draw import LABS, MONO, SANS, Canvas, _font
from faker import Faker
from mimesis import Address, Locale, Person

DEPARTMENTS = ["皮肤科", "内分泌科", "消化内科", "呼吸内科", "心内科", "儿科"]
DIAGNOSES = ["2型糖尿病", "慢性胃炎", "湿疹", "高血压2级", "支气管炎", "甲状腺结节"]


class People:
    """Names, phones and addresses from Faker or mimesis, chosen per value."""

    def __init__(self, fake: Faker, rng: random.Random) -> None:
        self.fake, self.rng = fake, rng
        seed = rng.randint(0, 10**6)
        self.person, self.address = Person(Locale.ZH, seed=seed), Address(Locale.ZH, seed=seed)

    def name(self) -> str:
        if self.rng.random() < 0.5:
            return self.fake.name()
        given, surname = self.person.full_name().split(" ", 1)
        return surname + given

    def phone(self) -> str:
        if self.rng.random() < 0.7:
            return self.fake.phone_number()
        return f"0{self.rng.randint(10, 999)}-{self.rng.randint(2000000, 89999999)}"

    def place(self, most: int = 18) -> str:
        if self.rng.random() < 0.5:
            return self.fake.address().split(" ")[0][:most]
        return (self.address.province() + self.address.city() + self.address.address())[:most]

    def hospital(self) -> str:
        suffix = self.rng.choice(["人民医院", "中心医院", "中医院", "妇幼保健院", "第二医院"])
        return self.fake.city().rstrip("市") + "市" + suffix

    def date(self) -> str:
        pattern = self.rng.choice(["%Y-%m-%d", "%Y/%m/%d", "%Y年%m月%d日", "%Y.%m.%d"])
        return self.fake.date(pattern=pattern)

    def number(self, prefix: str = "") -> str:
        return prefix + str(self.rng.randint(10**5, 10**9))


def _identifiers(p: People, rng: random.Random) -> list[tuple[str, str]]:
    """(label, value) pairs in one of several wordings each."""
    pairs = [
        (rng.choice(["姓名", "患者姓名", "就诊人", "受检者", "病人姓名"]), p.name()),
        (rng.choice(["住院号", "门诊号", "病历号", "ID号", "就诊卡号"]), p.number()),
        (rng.choice(["联系电话", "电话", "手机号", "联系方式"]), p.phone()),
        (rng.choice(["家庭住址", "地址", "现住址", "联系地址"]), p.place()),
        (rng.choice(["送检医生", "申请医生", "主治医生", "开单医生"]), p.name()),
        (rng.choice(["床号", "床位"]), f"{rng.randint(1, 60)}床"),
        (rng.choice(["送检日期", "采样时间", "就诊日期", "申请日期"]), p.date()),
        (rng.choice(["身份证号", "证件号码"]), p.fake.ssn()),
    ]
    # Printed forms often justify two-character labels to the width of longer ones.
    pairs = [
        ("  ".join(lab) if len(lab) == 2 and rng.random() < 0.35 else lab, v) for lab, v in pairs
    ]
    rng.shuffle(pairs)
    return pairs


def _clinical_rows(c: Canvas, rng: random.Random, x: int, y: int, size: int, n: int) -> int:
    for i, (name, abbr, unit, (lo, hi)) in enumerate(rng.sample(LABS, n)):
        value = round(rng.uniform(lo * 0.8, hi * 1.2), 1)
        c.clinical.append(c.text((x, y + i * (size + 14)), f"{name} {abbr}", size))
        c.clinical.append(c.text((x + 260, y + i * (size + 14)), f"{value} {unit}", size))
        c.text((x + 460, y + i * (size + 14)), f"{lo}-{hi}", size)
    return y + n * (size + 14)


def table_form(fake: Faker, rng: random.Random, variant: int) -> Canvas:
    """A header block of ruled cells: label in one cell, its value in the next."""
    p = People(fake, rng)
    face, size, per_row = (SANS, 18, 2) if variant == 0 else (MONO, 16, 3)
    c = Canvas((780, 900), (255, 255, 255), face=face, bold=rng.choice([0, 0, 1]))
    c.ids.append(c.text((180, 24), p.hospital(), 28))
    c.text((290, 68), rng.choice(["检验报告单", "检查申请单", "化验单"]), 22)
    pairs = _identifiers(p, rng)[: 3 * per_row]
    pairs.insert(1, ("科室", rng.choice(DEPARTMENTS)))
    cell = 760 // per_row
    label_w = 110 if variant == 0 else 96
    top, row_h = 110, size + 20
    for i, (label, value) in enumerate(pairs):
        x, y = 10 + (i % per_row) * cell, top + (i // per_row) * row_h
        c.draw.rectangle((x, y, x + label_w, y + row_h), outline=(60, 60, 60), fill=(238, 238, 238))
        c.draw.rectangle((x + label_w, y, x + cell, y + row_h), outline=(60, 60, 60))
        c.text((x + 6, y + 8), label, size)
        room = cell - label_w - 14
        while c.draw.textlength(value, font=_font(size, face)) > room:
            value = value[:-1]  # a long address is cut at its cell's edge, as printed
        box = c.text((x + label_w + 8, y + 8), value, size)
        if label != "科室":
            c.ids.append(box)
    y = top + (len(pairs) + per_row - 1) // per_row * row_h + 30
    y = _clinical_rows(c, rng, 30, y, size, 6)
    c.clinical.append(c.text((30, y + 20), "临床诊断：" + rng.choice(DIAGNOSES), size))
    c.text((30, y + 70), "报告医生", size)
    c.ids.append(c.text((30 + 5 * size, y + 70), p.name(), size))
    return c


def stacked_card(fake: Faker, rng: random.Random, variant: int) -> Canvas:
    """An app's visit card: small grey label on one line, the value under it."""
    p = People(fake, rng)
    dark = rng.random() < (0.4 if variant == 0 else 0.7)  # app themes: both in both halves
    bg, ink, grey = (
        ((28, 28, 30), (235, 235, 235), (150, 150, 150))
        if dark
        else ((246, 246, 246), (25, 25, 25), (130, 130, 130))
    )
    c = Canvas((540, 1000), bg)
    c.text((20, 10), "10:0" + str(rng.randint(0, 9)), 18, ink)
    c.text((200, 50), rng.choice(["就诊详情", "电子报告", "预约信息"]), 22, ink)
    panel = (44, 44, 46) if dark else (255, 255, 255)
    c.draw.rounded_rectangle((16, 100, 524, 640), radius=14, fill=panel)
    pairs = [*_identifiers(p, rng)[:5], ("就诊医院", p.hospital())]
    pairs = [(label, p.place(26) if "址" in label else value) for label, value in pairs]
    y = 120
    for label, value in pairs:
        c.text((36, y), label, 15, grey)
        # A long address wraps onto a second line, flush left under the first.
        parts = [value[:12], value[12:]] if "址" in label and len(value) > 12 else [value]
        for k, part in enumerate(parts):
            c.ids.append(c.text((36, y + 24 + 28 * k), part, 20 if variant == 0 else 19, ink))
        y += (84 if variant == 0 else 80) + 28 * (len(parts) - 1)
    c.draw.rounded_rectangle((16, 660, 524, 960), radius=14, fill=panel)
    c.text((36, 680), "诊断", 15, grey)
    c.clinical.append(c.text((36, 704), rng.choice(DIAGNOSES), 20, ink))
    c.text((36, 750), "医嘱", 15, grey)
    c.clinical.append(c.text((36, 774), "二甲双胍片 0.5g 每日两次", 20, ink))
    c.clinical.append(c.text((36, 808), f"空腹血糖 {rng.uniform(5, 12):.1f} mmol/L", 20, ink))
    return c


def inline_header(fake: Faker, rng: random.Random, variant: int) -> Canvas:
    """Dense one-line headers in small type, as on printed ward and lab slips."""
    p = People(fake, rng)
    size = 15 if variant == 0 else 13
    colon = "：" if variant == 0 else rng.choice([":", " "])
    c = Canvas((820, 760), (250, 250, 247), face=rng.choice([SANS, MONO]))
    c.ids.append(c.text((230, 20), p.hospital(), 26))
    c.text((330, 60), "检验报告", 20)
    ids = _identifiers(p, rng)
    sex = ("性别", rng.choice("男女"))
    age = ("年龄", f"{rng.randint(3, 90)}岁")
    dept = ("科别", rng.choice(DEPARTMENTS))
    rows = [[ids[0], sex, age, dept, ids[5]], [ids[1], ids[4], ids[6]], [ids[2], ids[3]]]
    y = 104
    for row in rows:
        x = 24
        for label, value in row:
            lbox = c.text((x, y), label + colon, size)
            vbox = c.text((int(lbox[2]) + (2 if colon != " " else 4), y), value, size)
            if (label, value) in ids:
                c.ids.append(vbox)
            x = int(vbox[2]) + 2 * size
        y += size + 12
    c.draw.line((20, y + 4, 800, y + 4), fill=(40, 40, 40), width=1)
    y = _clinical_rows(c, rng, 30, y + 16, size + 2, 7)
    c.text((24, y + 30), "检验者" + colon, size)
    c.ids.append(c.text((24 + 4 * size, y + 30), p.name(), size))
    c.text((300, y + 30), "报告日期" + colon, size)
    c.ids.append(c.text((300 + 5 * size, y + 30), p.date(), size))
    return c


def receipt(fake: Faker, rng: random.Random, variant: int) -> Canvas:
    """An outpatient fee receipt: payer, institution, serial number and items."""
    p = People(fake, rng)
    c = Canvas((720, 620), (255, 253, 245) if variant == 0 else (244, 250, 255))
    c.text((200, 20), "医疗门诊收费票据", 26, (160, 40, 40))
    size = 17 if variant == 0 else 15
    pairs = [
        ("交款人" if variant == 0 else "缴费人", p.name()),
        ("医疗机构" if variant == 0 else "收款单位", p.hospital()),
        ("票据号码" if variant == 0 else "流水号", p.number("NO.")),
        ("开票日期" if variant == 0 else "收费日期", p.date()),
    ]
    for i, (label, value) in enumerate(pairs):
        x, y = (30 + (i % 2) * 350, 80 + (i // 2) * 36)
        if variant == 0:
            lbox = c.text((x, y), label + "：", size)
            c.ids.append(c.text((int(lbox[2]) + 2, y), value, size))
        else:  # label above the value
            c.text((x, y * 2 - 80), label, size - 2, (110, 110, 110))
            c.ids.append(c.text((x, y * 2 - 80 + size + 4), value, size))
    y = 250
    c.draw.rectangle((24, y - 10, 696, y + 200), outline=(120, 120, 120))
    for i, drug in enumerate(["阿莫西林胶囊", "复方甘草片", "血常规检查", "诊查费"]):
        c.clinical.append(c.text((40, y + 40 * i), drug, size))
        c.text((420, y + 40 * i), f"{rng.uniform(5, 90):.2f}", size)
    c.text((40, y + 230), "收款人" if variant == 0 else "收费员", size)
    c.ids.append(c.text((40 + 4 * size, y + 230), p.name(), size))
    return c
