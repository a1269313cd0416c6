"""Build the independent de-identification evaluation set (dev and test halves).

Identifiers come from generators this project does not contain — Faker's ``zh_CN`` provider
(names, resident IDs, phones, provinces, cities, districts, streets, emails, URLs) and mimesis'
Chinese locale (full names, streets) — plus institutions, villages and record numbers composed
from their parts. They are placed by two independent methods:

* sentence templates, in two families written separately: family A for dev, family B for test,
  so no test phrasing was seen while rules were tuned;
* a compositional builder (openers x carriers x closers, OCR-like form lines with
  label/value pairs, full-width variants), whose parts are also split between the halves.

Clinical sentences with no identifier (drugs, diseases, doses, lab values, relative dates)
measure precision and "clinical terms kept". Ground truth is character offsets and a type.

    python benchmarks/deid_evalset/make.py     # rewrites data/dev.jsonl and data/test.jsonl
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from faker import Faker
from mimesis import Address, Person
from mimesis.locales import Locale

sys.path.insert(0, str(Path(__file__).parent))
from phrasings import (
    CLINICAL_SENTENCES,
    CLINICAL_TERMS,
    FAMILY_A,
    FAMILY_B,
    FORM_LABELS_A,
    FORM_LABELS_B,
)

DATA = Path(__file__).parent / "data"
CN_DIGITS = "〇一二三四五六七八九"


@dataclass
class Item:
    text: str = ""
    spans: list[dict[str, object]] = field(default_factory=list)
    clinical: list[str] = field(default_factory=list)
    method: str = ""

    def add(self, piece: str, kind: str | None = None) -> None:
        if kind:
            self.spans.append(
                {"start": len(self.text), "end": len(self.text) + len(piece), "type": kind}
            )
        self.text += piece


class Identities:
    """Identifier values, drawn from Faker and mimesis with one seed per half."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.faker = Faker("zh_CN")
        self.faker.seed_instance(seed)
        self.person = Person(Locale.ZH, seed=seed)
        self.address = Address(Locale.ZH, seed=seed)

    def choice(self, options: list[Callable[[], str]]) -> str:
        return self.rng.choice(options)()

    # -- people --------------------------------------------------------------------------
    def name(self) -> str:
        return self.choice(
            [
                self.faker.name,
                self.faker.name,
                lambda: self.person.full_name(reverse=True).replace(" ", ""),  # surname first
                lambda: self.faker.last_name() + self.faker.first_name(),
                self.minority_name,
            ]
        )

    def minority_name(self) -> str:
        first = self.rng.choice(["阿依", "古丽", "买买提", "热依", "努尔", "艾合", "帕提", "迪丽"])
        rest = self.rng.choice(["古丽", "江", "拉", "曼", "艾力", "尼亚", "热巴", "孜"])
        last = self.rng.choice(["吐尔逊", "艾买提", "阿不都", "热合曼", "玉素甫", "司马义"])
        return f"{first}{rest}·{last}"

    def nickname(self) -> str:
        given = self.faker.first_name()[-1]
        return self.rng.choice([f"小{given}", f"老{self.faker.last_name()}", f"阿{given}"])

    # -- places ----------------------------------------------------------------------------
    def district(self) -> str:
        return self.faker.district() + self.rng.choice(["区", "区", "县"])

    def village(self) -> str:
        return (
            self.rng.choice(["", "东", "西", "南", "北", "上", "下"])
            + self.faker.first_name()[-1]
            + self.rng.choice(["家村", "村", "庄村", "湾村", "坪村", "岭村"])
        )

    def address(self) -> str:
        number = self.rng.randint(1, 999)
        return self.choice(
            [
                lambda: f"{self.district()}{self.faker.street_name()}{number}号",
                lambda: (
                    f"{self.faker.city_name()}市{self.district()}{self.faker.street_name()}"
                    f"{number}号{self.rng.randint(1, 30)}栋{self.rng.randint(1, 6)}单元"
                ),
                lambda: (
                    f"{self.faker.district()}县{self.faker.first_name()}镇{self.village()}"
                    f"{self.rng.choice('一二三四五六七八')}组"
                ),
                lambda: f"{self.village()}{self.rng.randint(1, 12)}组",
                lambda: f"{self.address.street_name()}{number}号",
                lambda: (
                    f"{self.faker.street_name()}{self.faker.first_name()}小区"
                    f"{self.rng.randint(1, 20)}号楼"
                ),
            ]
        )

    def hospital(self) -> str:
        city = self.faker.city_name()
        district = self.faker.district()
        return self.choice(
            [
                lambda: f"{city}市第{self.rng.choice('一二三四五六七')}人民医院",
                lambda: f"{city}{district}区人民医院",
                lambda: f"{district}县中医院",
                lambda: f"{self.faker.first_name()}镇卫生院",
                lambda: f"{self.village()}卫生室",
                lambda: f"{district}社区卫生服务站",
                lambda: f"{self.faker.last_name()}氏齿科",
                lambda: f"{city}{self.faker.first_name()}口腔门诊部",
                lambda: f"{city}医科大学附属第{self.rng.choice('一二三')}医院",
                lambda: f"{city}妇幼保健院",
                lambda: f"{self.faker.company_prefix()}皮肤病诊所",
            ]
        )

    # -- numbers and dates -----------------------------------------------------------------
    def phone(self) -> str:
        mobile = self.faker.phone_number()
        area = self.rng.choice(["010", "021", "0571", "0755", "028", "0931", "0851"])
        local = str(self.rng.randint(2_000_000, 89_999_999))
        return self.rng.choice(
            [
                mobile,
                f"{mobile[:3]} {mobile[3:7]} {mobile[7:]}",
                f"{mobile[:3]}-{mobile[3:7]}-{mobile[7:]}",
                f"+86 {mobile}",
                f"{area}-{local}",
                f"({area}){local}",
                f"{area}{local}",
            ]
        )

    def date(self) -> str:
        d = self.faker.date_between(start_date="-30y", end_date="today")
        y, m, day = d.year, d.month, d.day
        cn_year = "".join(CN_DIGITS[int(c)] for c in str(y))
        cn = "〇一二三四五六七八九十"

        def cn_num(n: int) -> str:
            return (
                cn[n]
                if n <= 10
                else ("十" + (cn[n % 10] if n % 10 else ""))
                if n < 20
                else (cn[n // 10] + "十" + (cn[n % 10] if n % 10 else ""))
            )

        hh, mm = self.rng.randint(0, 23), self.rng.randint(0, 59)
        return self.rng.choice(
            [
                f"{y}年{m}月{day}日",
                f"{y}-{m:02d}-{day:02d}",
                f"{y}/{m}/{day}",
                f"{y}.{m:02d}.{day:02d}",
                f"{y % 100:02d}年{m}月{day}日",
                f"{y}{m:02d}{day:02d}",
                f"{cn_year}年{cn_num(m)}月{cn_num(day)}日",
                f"{y}-{m:02d}-{day:02d}{hh:02d}:{mm:02d}",
                f"{y}年{m}月{day}号",
            ]
        )

    def resident_id(self) -> str:
        return self.faker.ssn()

    def mrn(self) -> str:
        return self.rng.choice(
            [
                lambda: f"MZ{self.rng.randint(10**9, 10**10 - 1)}",
                lambda: f"{self.rng.randint(100000, 9999999)}",
                lambda: f"ZY{self.rng.randint(2015, 2025)}{self.rng.randint(10**5, 10**6 - 1)}",
            ]
        )()

    def order(self) -> str:
        return str(self.rng.randint(10**15, 10**19))

    def email(self) -> str:
        return self.faker.email()

    def url(self) -> str:
        return self.faker.url() + self.rng.choice(["", "report/" + self.faker.pystr(6, 10)])


FIELDS: dict[str, tuple[str, Callable[[Identities], str]]] = {
    "NAME": ("NAME", Identities.name),
    "NICK": ("NAME", Identities.nickname),
    "ADDR": ("ADDRESS", Identities.address),
    "HOSP": ("HOSPITAL", Identities.hospital),
    "PHONE": ("PHONE", Identities.phone),
    "DATE": ("DATE", Identities.date),
    "ID": ("ID", Identities.resident_id),
    "MRN": ("MRN", Identities.mrn),
    "ORDER": ("ORDER_ID", Identities.order),
    "EMAIL": ("EMAIL", Identities.email),
    "URL": ("URL", Identities.url),
}


def fill(template: str, ids: Identities, method: str) -> Item:
    """``template`` holds {FIELD} slots (FIELDS) and [clinical term] marks."""
    item = Item(method=method)
    rest = template
    while rest:
        brace, bracket = rest.find("{"), rest.find("[")
        cut = min(i for i in (brace, bracket, len(rest)) if i >= 0)
        item.add(rest[:cut])
        rest = rest[cut:]
        if not rest:
            break
        if rest[0] == "{":
            slot, rest = rest[1:].split("}", 1)
            kind, make = FIELDS[slot]
            item.add(make(ids), kind)
        else:
            term, rest = rest[1:].split("]", 1)
            item.clinical.append(term)
            item.add(term)
    return item


def form_lines(ids: Identities, labels: list[tuple[str, str]], method: str) -> Item:
    """An OCR-like report header: label/value pairs, irregular spacing, clinical values."""
    item = Item(method=method)
    chosen = ids.rng.sample(labels, k=min(len(labels), ids.rng.randint(3, 5)))
    sep = ids.rng.choice(["：", ":", " ", "：  "])
    for label, slot in chosen:
        item.add(f"{label}{sep}")
        kind, make = FIELDS[slot]
        item.add(make(ids), kind)
        item.add(ids.rng.choice(["  ", " ", "\t", "  性别 女  ", "  年龄 56岁 "]))
    value = ids.rng.choice(["白细胞 11.2×10^9/L", "血糖 7.8 mmol/L", "ALT 56 U/L"])
    item.add(value)
    item.clinical.append(value)
    return item


def build(seed: int, family: list[str], labels: list[tuple[str, str]], tag: str) -> list[Item]:
    ids = Identities(seed)
    items: list[Item] = []
    for _ in range(8):
        items += [fill(t, ids, f"template-{tag}") for t in family]
    items += [form_lines(ids, labels, f"form-{tag}") for _ in range(2 * len(family))]
    clinical = CLINICAL_SENTENCES[tag]
    items += [fill(t, ids, f"clinical-{tag}") for t in clinical]
    for item in items:  # every bracketed clinical term is counted where it stands
        item.clinical += [t for t in CLINICAL_TERMS if t in item.text and t not in item.clinical]
    return items


def write(items: list[Item], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for item in items:
            row = {"text": item.text, "spans": item.spans, "clinical": item.clinical}
            handle.write(json.dumps({**row, "method": item.method}, ensure_ascii=False) + "\n")


def main() -> None:
    write(build(101, FAMILY_A, FORM_LABELS_A, "A"), DATA / "dev.jsonl")
    write(build(202, FAMILY_B, FORM_LABELS_B, "B"), DATA / "test.jsonl")
    for half in ("dev", "test"):
        rows = [json.loads(x) for x in (DATA / f"{half}.jsonl").read_text("utf-8").splitlines()]
        print(f"{half}: {len(rows)} texts, {sum(len(r['spans']) for r in rows)} spans")


if __name__ == "__main__":
    main()
