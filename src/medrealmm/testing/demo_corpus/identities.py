"""Fake identifiers for the demo corpus: shaped like the real thing, tied to nobody."""

from __future__ import annotations

import random
from dataclasses import dataclass

SURNAMES = "张王李刘陈杨赵黄周吴徐孙马朱胡郭何林高罗"
GIVEN = (
    "伟",
    "芳",
    "娜",
    "敏",
    "静",
    "磊",
    "洋",
    "艳",
    "勇",
    "军",
    "杰",
    "婷",
    "强",
    "秀英",
    "建华",
    "晓明",
    "丽娟",
    "志强",
    "海燕",
    "国庆",
)
CITIES = ("江州", "临川", "云湖", "青阳", "南屿", "北岭")
DISTRICTS = ("朝阳区", "海淀区", "西湖区", "天河区", "武侯区", "鼓楼区")
ROADS = ("建国路", "中山路", "解放大道", "人民路", "长江路", "文化街")
HOSPITAL_FORMS = (
    "{city}市第{n}人民医院",
    "{city}市中心医院",
    "{city}仁和皮肤专科诊所",
    "{city}东湖社区卫生服务中心",
    "{city}妇幼保健院",
)

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


def id_check_char(first17: str) -> str:
    """GB 11643 check character for a mainland resident ID."""
    total = sum(int(d) * w for d, w in zip(first17, _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11]


@dataclass(frozen=True)
class Identity:
    name: str
    resident_id: str
    phone: str
    hospital: str
    address: str
    mrn: str
    insurance: str
    order_id: str
    visit_date: str
    url: str
    email: str


def make_identity(rng: random.Random) -> Identity:
    name = rng.choice(SURNAMES) + rng.choice(GIVEN)
    birth = f"{rng.randint(1950, 2019)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    region = rng.choice(["110101", "310104", "440106", "510107", "330106"])
    first17 = f"{region}{birth}{rng.randint(0, 999):03d}"
    city = rng.choice(CITIES)
    hospital = rng.choice(HOSPITAL_FORMS).format(city=city, n="一二三四五"[rng.randint(0, 4)])
    year, month, day = 2025, rng.randint(1, 12), rng.randint(1, 28)
    return Identity(
        name=name,
        resident_id=first17 + id_check_char(first17),
        phone=f"1{rng.choice('3456789')}{rng.randint(0, 999_999_999):09d}",
        hospital=hospital,
        address=f"{rng.choice(DISTRICTS)}{rng.choice(ROADS)}{rng.randint(1, 300)}号",
        mrn=f"MR{year}{month:02d}{rng.randint(100000, 999999)}",
        insurance=f"YB{rng.randint(10**11, 10**12 - 1)}",
        order_id=f"JD{year}{month:02d}{day:02d}{rng.randint(10**7, 10**8 - 1)}",
        visit_date=f"{year}年{month}月{day}日",
        url=f"https://health.example.cn/report/{rng.randint(10**5, 10**6 - 1)}",
        email=f"patient{rng.randint(100, 999)}@example.com",
    )
