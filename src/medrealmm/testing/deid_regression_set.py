"""The regression set: the labeled sentences and drawn documents the rules were first written
against, built from the demo generators' identities and layouts.

It is kept to catch regressions, not to measure generalization: the rules were tuned on it, so
its scores are an upper bound. The independent set is built by ``scripts/make_deid_evalset.py``.
Nothing here describes a real person.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.deid.checksum import check_char
from medrealmm.deid.spans import EntityType, Span
from medrealmm.testing.demo_corpus import drawing
from medrealmm.testing.demo_corpus.identities import GIVEN, SURNAMES, make_identity

Box = tuple[int, int, int, int]


class LabeledSentence(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    spans: list[Span] = Field(default_factory=list)
    clinical: list[str] = Field(default_factory=list, description="Substrings that must survive.")


class LabeledImage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    category: str
    boxes: dict[str, list[Box]]


# Slots: {NAME} {ID} {PHONE} {EMAIL} {URL} {ORDER_ID} {MRN} {HOSPITAL} {ORG} {ADDRESS} {DATE};
# clinical values are written inline between ‹ › and must survive masking.
TEMPLATES = (
    "我叫{NAME}，今年‹45岁›，咳嗽‹3天›了，体温‹38.5℃›。",
    "医生您好，我是{NAME}，孩子发烧‹2天›，最高‹39.2℃›。",
    "患者{NAME}，女，‹32岁›，停经‹6周›，空腹血糖‹7.8mmol/L›。",
    "姓名：{NAME}  性别：男  年龄：‹68岁›",
    "{NAME}医生，我按您说的吃了‹阿莫西林胶囊0.5g›，一天三次。",
    "上次{NAME}主任说要复查，血压‹150/95mmHg›。",
    "之前在{HOSPITAL}看过一次，说是湿疹，用了‹地奈德乳膏›‹7天›。",
    "我在{HOSPITAL}做的胃镜，幽门螺杆菌阳性，碳13呼气试验‹DOB值12.5›。",
    "{HOSPITAL}的报告显示白细胞‹12.5×10^9/L›，C反应蛋白‹28mg/L›。",
    "明天去{HOSPITAL}复查，需要空腹吗？",
    "我电话是{PHONE}，方便的话可以联系我。",
    "有事打{PHONE}找我，我白天都在。",
    "联系电话：{PHONE}，服药‹2周›后症状好转。",
    "身份证号{ID}，病历号{MRN}。",
    "我的身份证是{ID}，医保报销需要吗？",
    "病历号：{MRN}，糖化血红蛋白‹7.2%›。",
    "住院号{MRN}，出院诊断是肺炎，住了‹10天›。",
    "医保卡号{MRN}，能报销多少？",
    "我住在{ADDRESS}，离医院比较远。",
    "家庭地址：{ADDRESS}，药可以寄过来吗？",
    "{DATE}做的检查，甘油三酯‹2.3mmol/L›偏高。",
    "我是{DATE}开始吃的药，每次‹10mg›，每天‹1次›。",
    "报告链接是{URL}，您看一下。",
    "检查结果在{URL}可以查到。",
    "订单号{ORDER_ID}，药还没收到。",
    "我的订单{ORDER_ID}申请了退款。",
    "有问题可以发邮件到{EMAIL}。",
    "报告我发到您邮箱了，我的是{EMAIL}，体重‹62kg›。",
    "{NAME}，男，‹56岁›，住在{ADDRESS}，电话{PHONE}。",
    "{DATE}在{HOSPITAL}查的CT，肺结节‹8mm›。",
    "我叫{NAME}，在{ORG}上班，身份证{ID}，在{HOSPITAL}住过院。",
    "你好{NAME}，你的检验报告已出，血红蛋白‹98g/L›。",
    "宝宝叫{NAME}，‹3岁›，腹泻‹5次/天›。",
    "我妈妈{NAME}也有高血压，一直吃‹硝苯地平控释片30mg›。",
    "麻烦{NAME}大夫帮我看看，脸上起疹子‹一周›了。",
)
NEGATIVE = (
    "咳嗽‹3天›，体温最高‹38.5℃›，没有痰。",
    "空腹血糖‹7.8mmol/L›，糖化血红蛋白‹7.2%›，需要调整药量吗？",
    "奥美拉唑‹20mg bid›，阿莫西林‹1.0g bid›，连续‹14天›。",
    "去当地医院看过，医生说是湿疹，用了药没效果。",
    "建议去三甲医院皮肤科就诊，必要时做真菌镜检。",
    "我老公也有脚气，家里人要一起治疗吗？",
    "尿路感染反复发作，尿白细胞‹3+›，尿比重‹1.025›。",
    "心前区疼痛‹2小时›，含服硝酸甘油后缓解。",
    "孩子‹2岁›，体重‹12kg›，布洛芬混悬液每次给‹4ml›可以吗？",
    "谢谢医生！我先按这个方案来，‹1-2周›后复查。",
    "两周前开始出现皮疹，高热‹3天›，最高‹39.6℃›。",
    "LDL-C‹4.1mmol/L›，总胆固醇‹6.3mmol/L›，要吃他汀吗？",
    "血压‹160/100mmHg›，心率‹98次/分›，头晕。",
    "周围的人都说是过敏，我觉得不像。",
    "CA15-3‹32U/mL›，CEA‹2.1ng/mL›，需要进一步检查吗？",
    "马上就要考试了，最近失眠，每晚只睡‹4小时›。",
    "方便的话请把照片发给我看一下，多走路对恢复有帮助。",
    "孕‹12周›，TSH‹3.1mIU/L›，FT4‹13.2pmol/L›。",
)

_SLOT = re.compile(r"\{([A-Z_]+)\}|‹([^›]*)›")


def _phone(rng: random.Random) -> str:
    roll = rng.random()
    number = f"1{rng.choice('3456789')}{rng.randint(0, 999_999_999):09d}"
    if roll < 0.6:
        return number
    if roll < 0.75:
        return f"{number[:3]}-{number[3:7]}-{number[7:]}"
    area = rng.choice(["010", "021", "0755", "0571", "028"])
    return f"{area}-{rng.randint(2_000_000, 89_999_999)}"


def _resident_id(rng: random.Random) -> str:
    if rng.random() < 0.15:  # pre-1999 15-digit form
        region = rng.choice(["110101", "440106"])
        born = f"{rng.randint(50, 99)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
        return f"{region}{born}{rng.randint(0, 999):03d}"
    first17 = (
        f"{rng.choice(['110101', '310104', '440106', '510107', '330106'])}"
        f"{rng.randint(1950, 2020)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
        f"{rng.randint(0, 999):03d}"
    )
    return first17 + check_char(first17)


def _date(rng: random.Random) -> str:
    y, m, d = rng.randint(2018, 2025), rng.randint(1, 12), rng.randint(1, 28)
    return rng.choice(
        [f"{y}年{m}月{d}日", f"{y}-{m:02d}-{d:02d}", f"{y}/{m}/{d}", f"{y}.{m:02d}.{d:02d}"]
    )


def _address(rng: random.Random, base: str) -> str:
    roll = rng.random()
    if roll < 0.5:
        return base
    if roll < 0.75:
        estate = rng.choice(["阳光", "金色", "翠湖", "幸福"]) + rng.choice(["小区", "花园", "家园"])
        unit = f"{rng.randint(1, 30)}栋{rng.randint(1, 6)}单元{rng.randint(101, 2502)}室"
        return f"{base}{estate}{unit}"
    street = rng.choice(["中关村", "望京", "五里墩", "南湖"]) + "街道"
    return f"{street}{rng.choice(['建国路', '人民路', '长江路'])}{rng.randint(1, 300)}号"


_EMPLOYERS = (
    "华鑫精密机械有限公司",
    "建设银行滨江支行",
    "育英中学",
    "蓝海物流集团",
    "启明星幼儿园",
)


def _name(rng: random.Random) -> str:
    return rng.choice(SURNAMES) + rng.choice(GIVEN)


def _values(rng: random.Random) -> dict[str, str]:
    who = make_identity(rng)
    return {
        "NAME": _name(rng),
        "ID": _resident_id(rng),
        "PHONE": _phone(rng),
        "EMAIL": rng.choice([who.email, f"zhang.{rng.randint(10, 99)}@mail.example.net"]),
        "URL": rng.choice([who.url, f"www.example.org/r/{rng.randint(1000, 9999)}"]),
        "ORDER_ID": rng.choice([who.order_id, str(rng.randint(10**15, 10**16 - 1))]),
        "MRN": rng.choice([who.mrn, who.insurance, f"ZY{rng.randint(10**7, 10**8 - 1)}"]),
        "HOSPITAL": who.hospital,
        # Picked without the generator, so every other value stays what it was.
        "ORG": _EMPLOYERS[len(who.address) % len(_EMPLOYERS)],
        "ADDRESS": _address(rng, who.address),
        "DATE": _date(rng),
    }


def fill(template: str, values: dict[str, str]) -> LabeledSentence:
    text, spans, clinical, cursor = "", [], [], 0
    for match in _SLOT.finditer(template):
        text += template[cursor : match.start()]
        if match.group(1):
            value = values[match.group(1)]
            spans.append(
                Span(
                    start=len(text),
                    end=len(text) + len(value),
                    type=EntityType(match.group(1)),
                    text=value,
                    source="truth",
                )
            )
            text += value
        else:
            clinical.append(match.group(2))
            text += match.group(2)
        cursor = match.end()
    text += template[cursor:]
    return LabeledSentence(text=text, spans=spans, clinical=clinical)


def make_sentences(n: int = 360, seed: int = 7) -> list[LabeledSentence]:
    """``n`` sentences: about one in six is clinical text with no identifier at all."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        template = NEGATIVE[i % len(NEGATIVE)] if i % 6 == 5 else TEMPLATES[i % len(TEMPLATES)]
        out.append(fill(template, _values(rng)))
    return out


@dataclass
class ImageSetSpec:
    per_kind: int = 12
    size: tuple[int, int] = (1920, 1080)
    seed: int = 11
    kinds: tuple[str, ...] = field(default=("lab_report", "prescription", "ct_film"))


def _to_frame(drawn: drawing.DrawnImage, size: tuple[int, int], film: bool) -> drawing.DrawnImage:
    """Scale a drawn page into a 1080p frame (as a phone photo of a screen or page is)."""
    from PIL import Image

    width, height = size
    scale = height / drawn.image.height
    page = drawn.image.resize((round(drawn.image.width * scale), height), Image.LANCZOS)
    frame = Image.new("RGB", size, (8, 8, 8) if film else (250, 250, 247))
    left = (width - page.width) // 2
    frame.paste(page, (left, 0))
    out = drawing.DrawnImage(frame)
    for kind, boxes in drawn.pii_boxes.items():
        for x0, y0, x1, y1 in boxes:
            out.add(
                kind,
                (
                    left + int(x0 * scale),
                    int(y0 * scale),
                    left + int(x1 * scale + 0.999),
                    int(y1 * scale + 0.999),
                ),
            )
    return out


def make_images(out_dir: Path | str, spec: ImageSetSpec | None = None) -> list[LabeledImage]:
    """Draw documents with known identifier boxes into ``out_dir`` (PNG, 1080p frames)."""
    from medrealmm.testing.demo_corpus.generate import DRUGS, LAB_ROWS

    spec = spec or ImageSetSpec()
    rng = random.Random(spec.seed)
    out_dir = Path(out_dir)
    labeled: list[LabeledImage] = []
    for kind in spec.kinds:
        for i in range(spec.per_kind):
            who = make_identity(rng)
            if kind == "lab_report":
                rows = list(LAB_ROWS.values())[i % len(LAB_ROWS)]
                drawn = drawing.lab_report(rng, who, "检验报告单", rows)
            elif kind == "prescription":
                drugs = list(DRUGS.values())[i % len(DRUGS)]
                drawn = drawing.prescription(rng, who, drugs)
            else:
                drawn = drawing.ct_film(rng, who)
            framed = _to_frame(drawn, spec.size, film=kind == "ct_film")
            rel = f"{kind}_{i:02d}.png"
            drawing.save(framed, out_dir / rel)
            labeled.append(
                LabeledImage(
                    path=rel,
                    category=kind,
                    boxes={k: [tuple(b) for b in v] for k, v in framed.pii_boxes.items()},
                )
            )
    return labeled
