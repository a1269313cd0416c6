"""For make_cd.py: identifiers drawn from independent generators (Faker zh_CN, mimesis zh) and from
real-looking parts composed here, so the rules under test never saw their shapes."""

from __future__ import annotations

import random
from collections.abc import Callable

from faker import Faker
from mimesis import Address, Person
from mimesis.locales import Locale

CN_DIGITS = "〇一二三四五六七八九"
CN_MONTH = ["", "一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二"]
PLACE_PREFIX = [
    "平江",
    "清河",
    "东湖",
    "西峰",
    "南山",
    "北塘",
    "金水",
    "石桥",
    "青云",
    "白沙",
    "柳林",
    "松岗",
    "黄坡",
    "枣庄",
    "临湘",
    "安平",
    "永丰",
    "兴隆",
    "长乐",
    "桂阳",
    "岳西",
    "宁远",
    "新化",
    "茶陵",
    "双峰",
    "涟源",
    "武冈",
    "洞口",
    "隆回",
    "邵东",
]
VILLAGE = [
    "王家",
    "李庄",
    "马坪",
    "杨柳",
    "枫树",
    "大湾",
    "小溪",
    "塘坊",
    "高岭",
    "石门",
    "陈家",
    "凤凰",
    "桃源",
    "竹林",
    "荷叶",
]
MINORITY = [
    "阿依古丽",
    "买买提",
    "热合曼",
    "努尔",
    "古丽娜",
    "艾力",
    "阿不都",
    "帕提古丽",
    "吐尔逊",
    "迪丽",
    "木合塔尔",
    "巴特尔",
    "其木格",
    "乌兰",
    "阿迪力",
    "依明",
]


class Draw:
    """One seeded source of identifiers; each method returns (surface text, type)."""

    def __init__(self, seed: int, primary: str) -> None:
        self.rng = random.Random(seed)
        self.faker = Faker("zh_CN")
        self.faker.seed_instance(seed)
        self.person = Person(Locale.ZH, seed=seed)
        self.address = Address(Locale.ZH, seed=seed)
        self.primary = primary  # which generator leads this half: "faker" or "mimesis"
        self.half = "dev"

    def pick(self, options: list[str]) -> str:
        return self.rng.choice(options)

    def _use_faker(self) -> bool:
        return self.rng.random() < (0.7 if self.primary == "faker" else 0.3)

    # -- names ---------------------------------------------------------------------
    def full_name(self) -> str:
        if self._use_faker():
            return self.faker.name()
        return self.person.last_name() + self.person.first_name()

    def surname(self) -> str:
        return self.faker.last_name() if self._use_faker() else self.person.last_name()

    def name(self) -> tuple[str, str]:
        roll = self.rng.random()
        if roll < 0.6:
            return self.full_name(), "NAME"
        if roll < 0.75:
            return self.surname(), "NAME_SURNAME"  # used before a title: 王主任
        if roll < 0.88:
            return self.pick(["小", "老", "阿"]) + self.surname()[-1], "NAME"
        if roll < 0.95:
            return "·".join(self.rng.sample(MINORITY, 2)), "NAME"
        compound = self.pick(["欧阳", "司马", "上官", "诸葛", "慕容", "司徒", "夏侯", "皇甫"])
        return compound + self.faker.first_name(), "NAME"

    # -- places ------------------------------------------------------------------------
    def city(self) -> str:
        city = self.faker.city() if self._use_faker() else self.address.city()
        return city if city.endswith("市") else city + "市"

    def district(self) -> str:
        base = self.faker.district() if self._use_faker() else self.pick(PLACE_PREFIX)
        return base + self.pick(["区", "县", "区"])

    def urban_address(self) -> str:
        """Below the city: district, road and number, optionally a compound and unit."""
        road = self.faker.street_name() if self._use_faker() else self.address.street_name() + "路"
        out = self.district() + road + f"{self.rng.randint(1, 999)}号"
        if self.rng.random() < 0.5:
            out += self.pick(PLACE_PREFIX) + self.pick(["小区", "花园", "新村", "家园"])
            out += f"{self.rng.randint(1, 30)}栋{self.rng.randint(1, 6)}单元"
            out += f"{self.rng.randint(101, 2802)}室"
        return out

    def rural_address(self) -> str:
        county = self.pick(PLACE_PREFIX) + "县"
        town = self.pick(PLACE_PREFIX) + self.pick(["镇", "乡"])
        village = self.pick(VILLAGE) + "村"
        tail = self.pick(
            [f"{self.rng.randint(1, 12)}组", f"{CN_DIGITS[self.rng.randint(1, 9)]}组", "", ""]
        )
        roll = self.rng.random()
        if roll < 0.4:
            return county + town + village + tail
        if roll < 0.7:
            return town + village + tail
        return village + (tail or f"{self.rng.randint(1, 9)}组")

    def place(self) -> tuple[str, str]:
        return (self.urban_address() if self.rng.random() < 0.55 else self.rural_address()), (
            "ADDRESS"
        )

    def hospital(self) -> tuple[str, str]:
        place = self.pick(
            [self.city().removesuffix("市"), self.district(), self.pick(PLACE_PREFIX)]
        )
        roll = self.rng.random()
        if roll < 0.35:
            suffix = self.pick(["人民医院", "中医院", "第一人民医院", "妇幼保健院", "中心医院"])
            return place + suffix, "HOSPITAL"
        if roll < 0.6:
            town = self.pick(PLACE_PREFIX)
            suffix = self.pick(["镇卫生院", "乡卫生院", "社区卫生服务站", "社区卫生服务中心"])
            return town + suffix, "HOSPITAL"
        if roll < 0.75:
            return self.pick(VILLAGE) + "村卫生室", "HOSPITAL"
        if roll < 0.9:
            owner = self.surname()
            return owner + self.pick(["氏口腔门诊", "齿科", "口腔诊所", "记诊所"]), "HOSPITAL"
        short = place[:2] + self.pick(["人医", "中医", "一院", "妇幼"])
        return short, "HOSPITAL"

    # -- dates ---------------------------------------------------------------------------
    def date(self) -> tuple[str, str]:
        d = self.faker.date_between("-40y", "today")
        y, m, dd = d.year, d.month, d.day
        forms: list[Callable[[], str]] = [
            lambda: f"{y}年{m}月{dd}日",
            lambda: f"{y}-{m:02d}-{dd:02d}",
            lambda: f"{y}/{m}/{dd}",
            lambda: f"{y}.{m:02d}.{dd:02d}",
            lambda: f"{y}{m:02d}{dd:02d}",
            lambda: f"{y % 100:02d}年{m}月{dd}号",
            lambda: f"{y % 100:02d}.{m:02d}.{dd:02d}",
            lambda: f"{''.join(CN_DIGITS[int(c)] for c in str(y))}年{CN_MONTH[m]}月{dd}日",
            lambda: f"{y}年{CN_MONTH[m]}月{dd}号",
            lambda: (
                f"{y}-{m:02d}-{dd:02d}{self.rng.randint(0, 23):02d}:{self.rng.randint(0, 59):02d}"
            ),
            lambda: (
                f"{y}年{m:02d}月{dd:02d}日 {self.rng.randint(7, 18)}:{self.rng.randint(0, 59):02d}"
            ),
        ]
        return self.rng.choice(forms)(), "DATE"

    # -- structured ------------------------------------------------------------------------
    def phone(self) -> tuple[str, str]:
        roll = self.rng.random()
        if roll < 0.45:
            return (self.faker.phone_number() if self._use_faker() else self.mobile_spaced()), (
                "PHONE"
            )
        area = self.pick(["010", "021", "0731", "0755", "0571", "028", "0371", "0851"])
        local = str(self.rng.randint(2, 8)) + "".join(
            str(self.rng.randint(0, 9)) for _ in range(6 if len(area) == 4 else 7)
        )
        return self.pick(
            [f"{area}-{local}", f"({area}){local}", f"{area}{local}", f"{area} {local}"]
        ), "PHONE"

    def mobile_spaced(self) -> str:
        digits = self.faker.phone_number()
        return self.pick([f"{digits[:3]} {digits[3:7]} {digits[7:]}", f"+86 {digits}", digits])

    def resident_id(self) -> tuple[str, str]:
        return self.faker.ssn(), "ID"

    def email(self) -> tuple[str, str]:
        return (self.faker.free_email() if self._use_faker() else self.person.email()), "EMAIL"

    def url(self) -> tuple[str, str]:
        return self.faker.url().rstrip("/") + self.pick(
            ["", "/p/" + str(self.rng.randint(10, 99999))]
        ), "URL"

    def mrn(self) -> tuple[str, str]:
        n = self.rng.randint(6, 10)
        digits = "".join(str(self.rng.randint(0, 9)) for _ in range(n))
        return self.pick(["", "", "ZY", "MZ", "BL"]) + digits, "MRN"

    def order_id(self) -> tuple[str, str]:
        n = self.rng.randint(14, 22)
        return "".join(str(self.rng.randint(0, 9)) for _ in range(n)), "ORDER_ID"
