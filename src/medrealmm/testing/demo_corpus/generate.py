"""Generate the synthetic demo corpus: Chinese consultations with planted identifiers,
planted bad cases for every Phase 1 filter, and ground truth for tests.

Run ``python scripts/make_demo_corpus.py`` to regenerate the bundled copy. Everything is
derived from one seed; nothing here describes a real person.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from medrealmm.demo import CORPUS_FILE, NEXT_DIR, TRUTH_FILE
from medrealmm.io.jsonl import write_jsonl
from medrealmm.schema import Consultation, Event, ImageKind, ImageOrigin, ImageRef, Sender
from medrealmm.testing.demo_corpus import drawing
from medrealmm.testing.demo_corpus.identities import Identity, make_identity
from medrealmm.testing.demo_corpus.scenarios import SCENARIOS, Scenario

DEFAULT_SEED = 20260601

LAB_ROWS: dict[str, list[tuple[str, str, str, str]]] = {
    "内分泌科": [
        ("空腹血糖", "7.8", "mmol/L", "3.9-6.1"),
        ("糖化血红蛋白", "7.2", "%", "4.0-6.0"),
        ("甘油三酯", "2.3", "mmol/L", "<1.7"),
    ],
    "儿科": [
        ("白细胞", "12.5", "10^9/L", "4.0-12.0"),
        ("中性粒细胞%", "78", "%", "40-75"),
        ("C反应蛋白", "28", "mg/L", "<10"),
    ],
    "妇产科": [
        ("血红蛋白", "98", "g/L", "110-150"),
        ("TSH", "3.1", "mIU/L", "0.1-2.5"),
        ("FT4", "13.2", "pmol/L", "12-22"),
    ],
    "心血管内科": [
        ("总胆固醇", "6.3", "mmol/L", "<5.2"),
        ("LDL-C", "4.1", "mmol/L", "<3.4"),
        ("HDL-C", "1.0", "mmol/L", ">1.0"),
    ],
    "泌尿外科": [
        ("尿红细胞", "3+", "", "阴性"),
        ("尿白细胞", "阴性", "", "阴性"),
        ("尿比重", "1.025", "", "1.005-1.030"),
    ],
    "肿瘤科": [
        ("CA15-3", "32", "U/mL", "<25"),
        ("CEA", "2.1", "ng/mL", "<5"),
        ("CA125", "18", "U/mL", "<35"),
    ],
    "感染科": [
        ("HBsAg", "阳性", "", "阴性"),
        ("HBeAg", "阴性", "", "阴性"),
        ("ALT", "65", "U/L", "9-50"),
    ],
}
DRUGS: dict[str, list[str]] = {
    "消化内科": [
        "奥美拉唑肠溶胶囊 20mg bid",
        "阿莫西林胶囊 1.0g bid",
        "克拉霉素片 0.5g bid",
        "枸橼酸铋钾 0.6g bid",
    ],
    "中医科": [
        "酸枣仁 15g  柏子仁 10g",
        "生地黄 12g  麦冬 10g",
        "知母 10g  茯神 15g",
        "水煎服 日一剂",
    ],
    "精神心理科": ["艾司西酞普兰片 10mg qd", "劳拉西泮片 0.5mg qn prn"],
}


@dataclass
class Truth:
    """What tests may assert about a generated case."""

    expected_drop: str | None = None  # None: survives Phase 1; else the stage/reason expected
    planted_text_pii: dict[str, list[str]] = field(default_factory=dict)
    image_pii_boxes: dict[str, dict[str, list[list[int]]]] = field(default_factory=dict)


class _Builder:
    def __init__(self, rng: random.Random, root: Path, case_id: str, start: datetime) -> None:
        self.rng, self.root, self.case_id = rng, root, case_id
        self.events: list[Event] = []
        self.clock = start
        self.truth = Truth()
        self.images = 0

    def say(self, sender: Sender, text: str, images: list[ImageRef] | None = None) -> None:
        self.clock += timedelta(seconds=self.rng.randint(20, 240))
        self.events.append(
            Event(sender=sender, timestamp=self.clock, content=text, images=images or [])
        )

    def plant(self, kind: str, value: str) -> str:
        self.truth.planted_text_pii.setdefault(kind, []).append(value)
        return value

    def image(
        self,
        drawn: drawing.DrawnImage,
        category: str,
        *,
        origin: ImageOrigin = ImageOrigin.PATIENT,
        kind: ImageKind = ImageKind.MEDICAL,
        suffix: str = ".png",
    ) -> ImageRef:
        self.images += 1
        rel = f"images/{self.case_id}/{self.images:02d}_{category}{suffix}"
        drawing.save(drawn, self.root / rel)
        if drawn.pii_boxes:
            self.truth.image_pii_boxes[rel] = {
                k: [list(b) for b in v] for k, v in drawn.pii_boxes.items()
            }
        return ImageRef(path=rel, origin=origin, kind=kind, category=category)


def _draw_for(
    rng: random.Random, scenario: Scenario, who: Identity, variant: int
) -> tuple[drawing.DrawnImage, str, str]:
    cat = scenario.image_category
    if cat == "skin":
        return drawing.skin_photo(rng, who), "skin", ".jpg"
    if cat == "ct_film":
        return drawing.ct_film(rng, who), "ct_film", ".png"
    if cat == "prescription":
        return (
            drawing.prescription(
                rng, who, DRUGS.get(scenario.department, ["布洛芬缓释胶囊 0.3g bid"])
            ),
            "prescription",
            ".png",
        )
    rows = LAB_ROWS.get(scenario.department, LAB_ROWS["内分泌科"])
    title = "检验报告单" if variant == 0 else "复查报告单"
    return drawing.lab_report(rng, who, title, rows), "lab_report", ".png"


def _sticker(rng: random.Random) -> drawing.DrawnImage:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (96, 96), (255, 220, 80))
    d = ImageDraw.Draw(img)
    d.ellipse((28, 30, 40, 42), fill="black")
    d.ellipse((56, 30, 68, 42), fill="black")
    d.arc((26, 40, 70, 76), 10, 170, fill="black", width=4)
    return drawing.DrawnImage(img)


def _valid_case(
    b: _Builder, scenario: Scenario, who: Identity, n_images: int, extra_rounds: int
) -> None:
    rng = b.rng
    opener = scenario.complaint
    if rng.random() < 0.6:
        opener = f"我叫{b.plant('NAME', who.name)}，{opener}"
    b.say(Sender.PATIENT, opener)
    b.say(Sender.PHYSICIAN, scenario.history_question)
    answer = scenario.history_answer
    if rng.random() < 0.5:
        answer += f"之前在{b.plant('HOSPITAL', who.hospital)}看过一次。"
    b.say(Sender.PATIENT, answer)
    b.say(Sender.PHYSICIAN, "好的，方便的话请把相关的照片或检查报告发给我看一下。")
    refs = []
    for i in range(n_images):
        drawn, category, suffix = _draw_for(rng, scenario, who, i)
        refs.append(b.image(drawn, category, suffix=suffix))
    b.say(Sender.PATIENT, scenario.image_message, refs)
    b.say(Sender.PHYSICIAN, scenario.image_reading + "请问还有其他情况需要补充吗？")
    followup = scenario.followup_answer
    pii_roll = rng.random()
    if pii_roll < 0.3:
        followup += f"我电话是{b.plant('PHONE', who.phone)}，方便的话可以联系我。"
    elif pii_roll < 0.5:
        followup += f"身份证号{b.plant('ID', who.resident_id)}，病历号{b.plant('MRN', who.mrn)}。"
    elif pii_roll < 0.65:
        followup += (
            f"我住在{b.plant('ADDRESS', who.address)}，{b.plant('DATE', who.visit_date)}做的检查。"
        )
    elif pii_roll < 0.75:
        followup += (
            f"报告链接是{b.plant('URL', who.url)}，订单号{b.plant('ORDER_ID', who.order_id)}。"
        )
    elif pii_roll < 0.85:
        followup += f"有问题可以发邮件到{b.plant('EMAIL', who.email)}。"
    b.say(Sender.PATIENT, followup)
    b.say(Sender.PHYSICIAN, scenario.diagnosis_plan)
    b.say(Sender.PATIENT, scenario.medication_question)
    b.say(Sender.PHYSICIAN, scenario.medication_answer)
    closings = [
        ("好的，谢谢医生！", "不客气，祝您早日康复。"),
        ("明白了，我先按这个方案来。", "好的，有问题随时联系。"),
    ]
    for patient_text, physician_text in closings[:extra_rounds]:
        b.say(Sender.PATIENT, patient_text)
        b.say(Sender.PHYSICIAN, physician_text)
    if extra_rounds == 2:
        # The patient has the last word, so the dialogue has odd length (kept by the side
        # balance rule). A fixed pace: drawing from rng here would change every later case.
        b.clock += timedelta(seconds=60)
        b.events.append(Event(sender=Sender.PATIENT, timestamp=b.clock, content="收到，谢谢！"))


def _bad_case(b: _Builder, reason: str, scenario: Scenario, who: Identity) -> None:
    rng = b.rng
    if reason == "no_patient_image":
        b.say(
            Sender.PATIENT,
            scenario.complaint,
            [b.image(_sticker(rng), "sticker", kind=ImageKind.STICKER)],
        )
        b.say(Sender.PHYSICIAN, scenario.history_question)
        b.say(Sender.PATIENT, scenario.history_answer)
        drawn, category, suffix = _draw_for(rng, scenario, who, 0)
        b.say(
            Sender.PHYSICIAN,
            "这是示意图，供您参考。",
            [b.image(drawn, category, origin=ImageOrigin.PHYSICIAN, suffix=suffix)],
        )
        b.say(
            Sender.PATIENT,
            scenario.followup_answer,
            [b.image(_sticker(rng), "platform_card", origin=ImageOrigin.PLATFORM)],
        )
        b.say(Sender.PHYSICIAN, scenario.diagnosis_plan)
    elif reason == "too_few_turns":
        drawn, category, suffix = _draw_for(rng, scenario, who, 0)
        b.say(Sender.PATIENT, scenario.complaint, [b.image(drawn, category, suffix=suffix)])
        b.say(Sender.PHYSICIAN, scenario.diagnosis_plan)
        b.say(Sender.PATIENT, "好的，谢谢。")
    elif reason == "refund_close":
        drawn, category, suffix = _draw_for(rng, scenario, who, 0)
        b.say(Sender.PATIENT, scenario.complaint, [b.image(drawn, category, suffix=suffix)])
        b.say(Sender.PHYSICIAN, "您好，我看一下，请稍等。")
        b.say(Sender.PATIENT, "怎么还没回复？")
        b.say(Sender.PHYSICIAN, "抱歉，前面患者较多，马上为您解答。")
        b.say(Sender.PATIENT, "算了不问了，我要取消问诊，申请退款。")
        b.say(Sender.PHYSICIAN, "好的，已为您申请退款。")
    elif reason == "one_sided":
        drawn, category, suffix = _draw_for(rng, scenario, who, 0)
        b.say(Sender.PATIENT, scenario.complaint)
        b.say(Sender.PATIENT, scenario.history_answer, [b.image(drawn, category, suffix=suffix)])
        b.say(Sender.PATIENT, "医生在吗？")
        b.say(Sender.PATIENT, scenario.followup_answer)
        b.say(Sender.PHYSICIAN, scenario.image_reading)
        b.say(Sender.PATIENT, scenario.medication_question)
        b.say(Sender.PATIENT, "还有别的要注意的吗？")
        b.say(Sender.PHYSICIAN, scenario.medication_answer)
    elif reason == "too_many_turns":
        drawn, category, suffix = _draw_for(rng, scenario, who, 0)
        b.say(Sender.PATIENT, scenario.complaint, [b.image(drawn, category, suffix=suffix)])
        for i in range(16):
            b.say(Sender.PHYSICIAN, f"{scenario.history_question}（第{i + 1}次追问）"[:60])
            b.say(Sender.PATIENT, "嗯嗯，好的。")
        b.say(Sender.PHYSICIAN, scenario.diagnosis_plan)
    elif reason == "too_long":
        drawn, category, suffix = _draw_for(rng, scenario, who, 0)
        story = (scenario.history_answer + scenario.followup_answer) * 100
        b.say(
            Sender.PATIENT,
            scenario.complaint + "我把情况详细说一下：" + story[:4500],
            [b.image(drawn, category, suffix=suffix)],
        )
        b.say(Sender.PHYSICIAN, scenario.history_question)
        b.say(Sender.PATIENT, scenario.followup_answer * 20)
        b.say(Sender.PHYSICIAN, scenario.image_reading)
        b.say(Sender.PATIENT, scenario.medication_question * 20)
        b.say(Sender.PHYSICIAN, scenario.diagnosis_plan)
    elif reason == "face_dependent":
        face = drawing.skin_photo(rng, who)
        b.say(
            Sender.PATIENT,
            "医生，我脸上长了很多红斑，两侧脸颊对称，像蝴蝶一样，这是我的正脸照片。",
            [b.image(face, "face_photo", suffix=".jpg")],
        )
        b.say(
            Sender.PHYSICIAN,
            "您好，需要看一下完整的面部照片，红斑分布对判断很重要。有没有关节痛、口腔溃疡、怕晒？",
        )
        b.say(Sender.PATIENT, "有关节痛，晒太阳后会加重。")
        b.say(
            Sender.PHYSICIAN,
            "从面部正面照片看，双颊对称性蝶形红斑，需警惕系统性红斑狼疮，建议查抗核抗体、抗dsDNA抗体、血常规和尿常规。",
        )
        b.say(Sender.PATIENT, "好的，我去医院查。")
        b.say(Sender.PHYSICIAN, "检查结果出来后可以再来咨询，注意防晒。")
    else:
        raise ValueError(f"unknown planted reason {reason}")


BAD_CASES = (
    "no_patient_image",
    "too_few_turns",
    "refund_close",
    "one_sided",
    "too_many_turns",
    "too_long",
    "face_dependent",
)


def generate_demo_corpus(
    out_dir: Path | str, *, seed: int = DEFAULT_SEED, n_valid: int = 33, n_added: int = 2
) -> Path:
    """Write ``consultations.jsonl``, ``images/`` and ``truth.json`` under ``out_dir``, and
    ``n_added`` more valid cases under ``out_dir/next/`` (the same layout): what the demo's
    version 0.2 adds. They are drawn after every first-version case, so those stay the same."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    start = datetime(2025, 6, 1, 9, 0, 0)
    consultations: list[Consultation] = []
    truth: dict[str, dict[str, object]] = {}
    # Skew toward dermatology and endocrinology, as raw traffic is, so balancing has work to do.
    weights = [6 if s.department in ("皮肤科", "内分泌科") else 1 for s in SCENARIOS]
    plan: list[tuple[str, Scenario, str | None]] = []
    for i, scenario in enumerate(SCENARIOS):  # every scenario at least once
        plan.append((f"demo-{i:03d}", scenario, None))
    for i in range(len(SCENARIOS), n_valid):
        plan.append((f"demo-{i:03d}", rng.choices(SCENARIOS, weights)[0], None))
    for j, reason in enumerate(BAD_CASES):
        scenario = SCENARIOS[0] if reason == "face_dependent" else SCENARIOS[j % len(SCENARIOS)]
        plan.append((f"demo-bad-{j:02d}-{reason.replace('_', '-')}", scenario, reason))
    added = [f"demo-{i:03d}" for i in range(n_valid, n_valid + n_added)]
    for case_id, drawn, reason in [*plan, *((case_id, None, None) for case_id in added)]:
        scenario = drawn or rng.choices(SCENARIOS, weights)[0]  # an added case's, drawn last
        who = make_identity(rng)
        root = out if len(consultations) < len(plan) else out / NEXT_DIR
        b = _Builder(rng, root, case_id, start + timedelta(hours=len(consultations) * 7))
        if reason is None:
            _valid_case(
                b,
                scenario,
                who,
                n_images=rng.choice((1, 1, 2, 2, 3, 4)),
                extra_rounds=rng.choice((0, 1, 2)),
            )
        else:
            _bad_case(b, reason, scenario, who)
            b.truth.expected_drop = reason
        consultations.append(
            Consultation(
                id=case_id,
                department=scenario.department,
                subspecialty=scenario.subspecialty,
                events=b.events,
                meta={"source": "synthetic-demo", "seed": seed},
            )
        )
        truth[case_id] = {
            "expected_drop": b.truth.expected_drop,
            "planted_text_pii": b.truth.planted_text_pii,
            "image_pii_boxes": b.truth.image_pii_boxes,
        }
    first = {case_id for case_id, _, _ in plan}
    for root, ids in ((out, first), (out / NEXT_DIR, set(added))):
        root.mkdir(parents=True, exist_ok=True)
        write_jsonl(root / CORPUS_FILE, [c for c in consultations if c.id in ids])
        shown = {case_id: t for case_id, t in truth.items() if case_id in ids}
        (root / TRUTH_FILE).write_text(
            json.dumps(shown, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
            encoding="utf-8",
        )
    return out / CORPUS_FILE
