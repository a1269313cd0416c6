"""A second, separately written generator for the evaluation set: data/{dev,test}-cd.jsonl.

``make.py`` writes families A (dev) and B (test); this one writes four more families per half
(``*_a`` for dev, ``*_b`` for test in ``templates_cd.py``) in other registers (patient chat,
physician replies, lab/invoice/prescription/report OCR lines) plus its own sentence builder
and identifier-free clinical sentences. Each half has its own families, builder vocabulary,
seed and leading identifier generator (dev: Faker first, test: mimesis first), so no test
phrasing is seen while tuning on dev. Deterministic: the same seed writes the same bytes.

    python benchmarks/deid_evalset/make_cd.py
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from identifiers import Draw
from templates_cd import (
    BUILDER,
    CLINICAL,
    CLINICAL_ONLY,
    DEV_FAMILIES,
    TEST_FAMILIES,
)

DATA = Path(__file__).parent / "data"
HALVES = {
    "dev": (1001, "faker", DEV_FAMILIES),
    "test": (2002, "mimesis", TEST_FAMILIES),
}
SLOT = re.compile(r"\{([A-Z]+)\}")
TITLES = {"dev": ["主任", "医生", "老师", "护士"], "test": ["大夫", "护士长", "老师", "主任"]}
NOISE = ["", "", "", "", "～", "。。。", "哈哈", "？？", "😂", "🙏", " ", "!"]
FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in "0123456789"}


def _identifier(draw: Draw, slot: str) -> tuple[str, str | None]:
    if slot == "NAME":
        text, kind = draw.name()
        return (draw.full_name() if kind == "NAME_SURNAME" else text), "NAME"
    if slot == "SURNAME":
        return draw.surname(), "NAME"
    if slot == "CITY":
        return draw.pick(["", draw.city()]), None
    method = {
        "ADDRESS": draw.place,
        "HOSPITAL": draw.hospital,
        "DATE": draw.date,
        "PHONE": draw.phone,
        "ID": draw.resident_id,
        "EMAIL": draw.email,
        "URL": draw.url,
        "MRN": draw.mrn,
        "ORDER": draw.order_id,
    }[slot]
    return method()


def clinical_words(slot: str, half: str) -> list[str]:
    """Drugs and diseases alternate between the halves, so a lexicon tuned on dev terms is
    measured on test terms it never saw; the other clinical slots are shared."""
    values = CLINICAL[slot].split()
    if slot not in ("DRUG", "DISEASE"):
        return values
    return values[0::2] if half == "dev" else values[1::2]


def fill(template: str, draw: Draw) -> dict[str, object]:
    """Fill every slot, recording identifier offsets and the clinical strings placed."""
    text, spans, clinical, cursor = "", [], [], 0
    for match in SLOT.finditer(template):
        text += template[cursor : match.start()]
        slot = match.group(1)
        if slot in CLINICAL:
            value = draw.pick(clinical_words(slot, draw.half))
            clinical.append(value)
            kind = None
        else:
            value, kind = _identifier(draw, slot)
        if kind:
            spans.append({"start": len(text), "end": len(text) + len(value), "type": kind})
        text += value
        cursor = match.end()
    text += template[cursor:]
    return {"text": text, "spans": spans, "clinical": clinical}


def add_noise(record: dict[str, object], rng: random.Random, ocr: bool) -> None:
    text = str(record["text"])
    if ocr and rng.random() < 0.3:
        text = text.replace("：", rng.choice([":", " ", "："]))
    if not ocr and rng.random() < 0.4:
        text += rng.choice(NOISE)
    if rng.random() < 0.06:  # full-width digits: same length, offsets unchanged
        text = "".join(FULL_WIDTH.get(c, c) for c in text)
        record["clinical"] = [
            "".join(FULL_WIDTH.get(c, c) for c in v)
            for v in record["clinical"]  # type: ignore[union-attr]
        ]
    record["text"] = text


def build_half(split: str) -> list[dict[str, object]]:
    seed, primary, families = HALVES[split]
    draw = Draw(seed, primary)
    draw.half = split
    rng = random.Random(seed + 7)
    records: list[dict[str, object]] = []

    def add(template: str, family: str) -> None:
        record = fill(template, draw)
        add_noise(record, rng, ocr=family.startswith("ocr"))
        text = str(record["text"])
        for span in record["spans"]:  # type: ignore[union-attr]
            span["text"] = text[span["start"] : span["end"]]
        records.append({**record, "method": family})

    for _ in range(12):
        for family, templates in families.items():
            for template in templates:
                add(template, family)
    parts = BUILDER[split]
    for _ in range(120):
        template = rng.choice(parts["opener"]) + rng.choice(parts["clause"])
        add(template + rng.choice(parts["tail"]), "builder")
    for _ in range(24):
        for template in CLINICAL_ONLY[split]:
            add(template, "clinical_only")
    return records


def main() -> None:
    DATA.mkdir(exist_ok=True)
    for split in HALVES:
        records = build_half(split)
        path = DATA / f"{split}-cd.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for record in records:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        n_spans = sum(len(r["spans"]) for r in records)  # type: ignore[arg-type]
        print(f"{path.name}: {len(records)} utterances, {n_spans} spans")


if __name__ == "__main__":
    main()
