"""Generalization probe: identifiers from generators the rules were not written against.

Faker (zh_CN, zh_TW, en_US) and mimesis (zh) make names, phones, government IDs, e-mails,
URLs, IP addresses, bank cards, plates, addresses, employers and schools, and dates; each is
put in a sentence frame written here (several per category, patient and doctor voice) and
the text pass (rules + LAC NER, ``find_spans``) masks it. Recall is the share of identifiers
whose characters are at least 90% masked (any type), per category and per generator.

Seed 0 is the seed looked at while the frames and the veto classes were written (a tuning
seed, an upper bound); seeds 1 to 3 were not looked at before being reported. Nothing here
measures precision: see ``deid_eval.py`` for that.

``--forms`` prints instead the round-3 coverage-matrix rows (``testing.deid_written_forms``:
ages over 89, lunar and festival dates, postal codes, coordinates, landmarks, school and class,
document and staff numbers, every platform's account and its evasive spellings, Latin-script
and pinyin names, disguised numbers, HK/Macau phones, TW/HK/Macau addresses), three or more
written forms each, ``--per`` values per form and seed.

    python benchmarks/deid_probe.py [--per 40] [--seeds 0 1 2 3] [--show 10] [--forms]
"""

from __future__ import annotations

import argparse
import os
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from faker import Faker
from mimesis import Address, Finance, Person
from mimesis.locales import Locale

from medrealmm.deid.text import find_spans_in
from medrealmm.testing.deid_written_forms import ROWS

TUNING_SEEDS = frozenset({0})

FRAMES: dict[str, tuple[str, ...]] = {
    "NAME": (
        "我叫{}，咳嗽三天了，晚上更厉害。",
        "患者{}，女，52岁，血压控制不好。",
        "医生您好，我是{}的家属，想问复查的事。",
        "我老公{}最近总是头晕，要紧吗？",
        "{}您好，您的化验单出来了。",
    ),
    "PHONE": (
        "我电话{}，结果出来麻烦告诉我。",
        "联系方式：{}，白天都能接。",
        "有事打我手机{}就行。",
    ),
    "ID": (
        "身份证号{}，挂号要用。",
        "证件号码：{}，麻烦帮我登记一下。",
    ),
    "EMAIL": (
        "报告发我邮箱{}吧。",
        "我的邮箱是{}，片子可以传过来。",
    ),
    "URL": (
        "我在{}看到一篇文章说这个药伤肝。",
        "检查结果在这个链接里：{}",
    ),
    "IP": (
        "登录地址显示{}，是不是我自己登的？",
        "系统日志里是{}这个IP访问的。",
    ),
    "BANK_CARD": (
        "退款打到我卡上，卡号{}。",
        "银行卡号：{}，户名是我本人。",
    ),
    "PLATE": (
        "我车牌{}，医院停车场能免费吗？",
        "送我来的是一辆车牌号为{}的出租车。",
    ),
    "ADDRESS": (
        "我住在{}，离医院远不远？",
        "家庭住址：{}",
        "药寄到{}就行。",
    ),
    "ORG": (
        "我在{}上班，每天坐着，腰疼。",
        "工作单位：{}",
        "孩子在{}读书，学校体检说有点近视。",
    ),
    "DATE": (
        "我是{}做的手术。",
        "出生日期：{}",
        "上次月经是{}来的。",
    ),
}

Make = Callable[[random.Random], str]


@dataclass
class Generators:
    """Each category's generators, keyed by the library and locale that made them."""

    by_category: dict[str, dict[str, Make]]


def _date(fake: Faker, layout: int) -> str:
    day = fake.date_of_birth(minimum_age=1, maximum_age=90)
    return [
        f"{day.year}-{day.month:02d}-{day.day:02d}",
        f"{day.year}年{day.month}月{day.day}日",
        f"{day.year}/{day.month}/{day.day}",
        f"{day.year}.{day.month:02d}.{day.day:02d}",
        f"{day.month}月{day.day}号",
    ][layout]


def generators(seed: int) -> Generators:
    cn, tw, us = Faker("zh_CN"), Faker("zh_TW"), Faker("en_US")
    for n, fake in enumerate((cn, tw, us)):
        fake.seed_instance(seed * 10 + n)
    person = Person(Locale.ZH, seed=seed)
    address = Address(Locale.ZH, seed=seed)
    finance = Finance(Locale.ZH, seed=seed)
    return Generators(
        {
            "NAME": {
                "faker zh_CN": lambda r: cn.name(),
                "faker zh_TW": lambda r: tw.name(),
                "mimesis zh": lambda r: person.last_name() + person.first_name(),
                "faker en_US": lambda r: us.name(),
            },
            "PHONE": {
                "faker zh_CN": lambda r: cn.phone_number(),
                "faker zh_TW": lambda r: tw.phone_number(),
                "mimesis zh": lambda r: person.telephone(),
            },
            "ID": {
                "faker zh_CN": lambda r: cn.ssn(),
                "faker zh_TW": lambda r: tw.ssn(),
            },
            "EMAIL": {
                "faker zh_CN": lambda r: cn.email(),
                "faker en_US": lambda r: us.free_email(),
                "mimesis zh": lambda r: person.email(),
            },
            "URL": {"faker zh_CN": lambda r: cn.url(), "faker en_US": lambda r: us.url()},
            "IP": {"faker v4": lambda r: cn.ipv4(), "faker v6": lambda r: cn.ipv6()},
            "BANK_CARD": {"faker": lambda r: cn.credit_card_number()},
            "PLATE": {
                "faker zh_CN": lambda r: cn.license_plate(),
                "faker zh_TW": lambda r: tw.license_plate(),
            },
            "ADDRESS": {
                # below the province, which the project keeps (docs/DEIDENTIFICATION.md)
                "faker zh_CN": lambda r: cn.city() + cn.district() + cn.street_address(),
                "faker zh_TW": lambda r: tw.address().split(" ", 1)[-1],  # no postcode
                "mimesis zh": lambda r: address.city() + address.address(),
            },
            "ORG": {
                "faker zh_CN": lambda r: cn.company(),
                "faker zh_TW": lambda r: tw.company(),
                "mimesis zh": lambda r: finance.company(),
                "mimesis zh university": lambda r: person.university(),
            },
            "DATE": {"faker": lambda r: _date(cn, r.randrange(5))},
        }
    )


@dataclass
class Probe:
    category: str
    generator: str
    text: str
    start: int
    end: int


def probes(seed: int, per: int) -> list[Probe]:
    rng = random.Random(seed)
    out: list[Probe] = []
    for category, makers in generators(seed).by_category.items():
        for generator, make in makers.items():
            for _ in range(per):
                value = make(rng).strip()
                frame = rng.choice(FRAMES[category])
                start = frame.index("{}")
                text = frame.format(value)
                out.append(Probe(category, generator, text, start, start + len(value)))
    return out


def run(seeds: list[int], per: int, show: int) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    found: dict[str, Counter[tuple[str, str]]] = {"tuning": Counter(), "reported": Counter()}
    total: dict[str, Counter[tuple[str, str]]] = {"tuning": Counter(), "reported": Counter()}
    misses: list[tuple[str, Probe]] = []
    for seed in seeds:
        group = "tuning" if seed in TUNING_SEEDS else "reported"
        batch = probes(seed, per)
        for probe, spans in zip(batch, find_spans_in([p.text for p in batch]), strict=True):
            masked = {i for s in spans for i in range(s.start, s.end)}
            hit = sum(i in masked for i in range(probe.start, probe.end))
            key = (probe.category, probe.generator)
            total[group][key] += 1
            if hit >= 0.9 * (probe.end - probe.start):
                found[group][key] += 1
            else:
                misses.append((group, probe))
    tuned = ", ".join(map(str, sorted(set(seeds) & TUNING_SEEDS))) or "none"
    reported = ", ".join(map(str, sorted(set(seeds) - TUNING_SEEDS))) or "none"
    print(
        f"\n== generalization probe: rules + NER, {per} identifiers per generator and seed; "
        f"tuning seeds {tuned}, reported seeds {reported} =="
    )
    print(f"  {'category':<10} {'generator':<24} {'tuning':>14} {'reported':>14}")
    for category, generator in sorted(set(total["tuning"]) | set(total["reported"])):
        key = (category, generator)
        cells = [
            f"{found[g][key] / total[g][key]:.3f} ({total[g][key]})" if total[g][key] else "-"
            for g in ("tuning", "reported")
        ]
        print(f"  {category:<10} {generator:<24} {cells[0]:>14} {cells[1]:>14}")
    for category in FRAMES:
        cells = []
        for g in ("tuning", "reported"):
            n = sum(v for (c, _), v in total[g].items() if c == category)
            k = sum(v for (c, _), v in found[g].items() if c == category)
            cells.append(f"{k / n:.3f} ({n})" if n else "-")
        print(f"  {category:<10} {'all':<24} {cells[0]:>14} {cells[1]:>14}")
    all_cells = []
    for g in ("tuning", "reported"):
        n, k = sum(total[g].values()), sum(found[g].values())
        all_cells.append(f"{k / n:.3f} ({n})" if n else "-")
    print(f"  {'all':<10} {'':<24} {all_cells[0]:>14} {all_cells[1]:>14}")
    print(f"  load average {os.getloadavg()[0]:.2f}")
    for group, probe in misses[:show]:
        print(f"  miss ({group}) {probe.category}/{probe.generator}: {probe.text}")


def run_forms(seeds: list[int], per: int, show: int) -> None:
    """Recall of each written form of the round-3 rows, rules + NER."""
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    cases: list[tuple[str, str, str, int, int]] = []
    for seed in seeds:
        rng = random.Random(seed)
        for row in ROWS:
            for form, make in row.forms.items():
                for _ in range(per):
                    text, value = make(rng)
                    start = text.index(value)
                    cases.append((row.name, form, text, start, start + len(value)))
    found: Counter[tuple[str, str]] = Counter()
    total: Counter[tuple[str, str]] = Counter()
    misses: list[str] = []
    spans_of = find_spans_in([c[2] for c in cases])
    for (row, form, text, start, end), spans in zip(cases, spans_of, strict=True):
        masked = {i for s in spans for i in range(s.start, s.end)}
        total[row, form] += 1
        if sum(i in masked for i in range(start, end)) >= 0.9 * (end - start):
            found[row, form] += 1
        else:
            misses.append(f"  miss {row}/{form}: {text!r}")
    print(
        f"\n== written forms of the round-3 rows: rules + NER, {per} per form and seed, seeds "
        f"{', '.join(map(str, seeds))} =="
    )
    for row in ROWS:
        for form in row.forms:
            key = (row.name, form)
            share = f"{found[key] / total[key]:.3f} ({total[key]})"
            print(f"  {row.name[:44]:<44} {form[:28]:<28} {share}")
    n, k = sum(total.values()), sum(found.values())
    print(f"  {'all':<73} {k / n:.3f} ({n})")
    print(f"  load average {os.getloadavg()[0]:.2f}")
    print("\n".join(misses[:show]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--per", type=int, default=40, help="identifiers per generator and seed")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--show", type=int, default=10, help="misses shown")
    parser.add_argument("--forms", action="store_true", help="the round-3 rows' written forms")
    args = parser.parse_args()
    if args.forms:
        run_forms(args.seeds, args.per, args.show)
    else:
        run(args.seeds, args.per, args.show)


if __name__ == "__main__":
    main()
