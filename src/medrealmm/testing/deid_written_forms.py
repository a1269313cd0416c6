"""Written forms of the coverage-matrix rows added in de-identification round 3: for each row,
three or more ways people write such an identifier, each a generator of (sentence, value).

The values are drawn at random (digits, invented names from small invented lists); the sentence
frames were written here. ``benchmarks/deid_probe.py --forms`` prints recall per row and form
over several seeds; ``tests/deid/test_deid_written_forms.py`` holds every form to the rules.
Nothing here describes a real person.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from medrealmm.deid.checksum import check_char

Make = Callable[[random.Random], tuple[str, str]]

_SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗郑梁谢宋唐韩冯邓曹彭曾萧田董潘袁蔡蒋余杜叶"
_GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍红建文辉力宁彬斌宇浩凯健俊帆鹏"
_PINYIN = {
    "王": "wang",
    "李": "li",
    "张": "zhang",
    "刘": "liu",
    "陈": "chen",
    "杨": "yang",
    "黄": "huang",
    "赵": "zhao",
    "周": "zhou",
    "徐": "xu",
}
_PINYIN_GIVEN = ["wei", "fang", "min", "jing", "qiang", "lei", "jun", "yang", "xiaoming", "lihua"]
_ENGLISH_FIRST = ["Kevin", "Jessica", "Amy", "Jason", "Vivian", "Eric", "Grace", "Tony", "Cindy"]
_CANTONESE = ["Chan Tai Man", "Wong Siu Ming", "Lee Ka Yan", "Cheung Wai Kit", "Lau Mei Ling"]
_HOKKIEN = ["Tan Ah Kow", "Lim Bee Hoon", "Ong Chee Seng", "Goh Siew Lan", "Teo Kim Huat"]
_SPOKEN = {"0": "洞", "1": "幺", "2": "两", "7": "拐", "9": "勾"}
_CN = "零一二三四五六七八九"
_CN_MONTHS = ["正", "二", "三", "四", "五", "六", "七", "八", "九", "十", "冬", "腊"]
_CN_DAYS = ["初一", "初五", "初八", "初十", "十五", "十八", "二十", "廿三", "廿六", "三十"]
_FESTIVALS = ["中秋节", "端午节", "除夕", "元宵节", "大年初三", "重阳节", "七夕"]
_ESTATES = ["翠景苑", "华庭花园", "锦绣家园", "东湖新村", "金桂小区", "绿洲花园"]
_LANDMARKS = ["万达广场", "人民公园", "新华书店", "南湖体育馆", "解放路菜市场", "建设银行"]
_SCHOOLS = ["育英小学", "实验中学", "城东小学", "第二中学", "向阳幼儿园", "外国语学校"]


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _mobile(rng: random.Random) -> str:
    return "1" + rng.choice("3456789") + _digits(rng, 9)


def _resident_id(rng: random.Random) -> str:
    body = f"{rng.choice(['110105', '440304', '330106', '510107'])}19{rng.randint(40, 99)}"
    body += f"{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{_digits(rng, 3)}"
    return body + check_char(body)


def _name(rng: random.Random) -> str:
    return rng.choice(_SURNAMES) + "".join(rng.choice(_GIVEN) for _ in range(rng.randint(1, 2)))


def _frame(template: str, value: str) -> tuple[str, str]:
    return template.format(value), value


def _cn_number(n: int) -> str:
    """90..120 in Chinese numerals (九十三, 一百零二)."""
    if n < 100:
        return "九十" + (_CN[n % 10] if n % 10 else "")
    rest = n - 100
    return "一百" + (
        "" if rest == 0 else ("零" + _CN[rest] if rest < 10 else "一十" + _CN[rest % 10])
    )


def _spoken(digits: str) -> str:
    return "".join(_SPOKEN.get(d, _CN[int(d)]) for d in digits)


def _groups(value: str, size: int, sep: str) -> str:
    return sep.join(value[i : i + size] for i in range(0, len(value), size))


@dataclass(frozen=True)
class Row:
    """A coverage-matrix row and its written forms (form name -> generator)."""

    name: str
    forms: dict[str, Make]


ROWS: list[Row] = [
    Row(
        "ages over 89",
        {
            "digits + 岁": lambda r: _frame(
                "我奶奶今年{}了，最近老失眠", f"{r.randint(90, 110)}岁"
            ),
            "Chinese numerals": lambda r: _frame(
                "老爷子{}，吃饭总呛咳", _cn_number(r.randint(90, 105)) + "岁"
            ),
            "English": lambda r: _frame(
                "my grandma is {}, has a cough", f"{r.randint(90, 104)} years old"
            ),
            "after an age label": lambda r: _frame("年龄：{}，高血压", f"{r.randint(90, 108)}岁"),
        },
    ),
    Row(
        "lunar, festival and month-day dates",
        {
            "农历 month-day": lambda r: _frame(
                "去年{}那天开始咳嗽",
                f"农历{r.choice(_CN_MONTHS[1:10])}月{r.choice(_CN_DAYS)}",
            ),
            "正月/冬月/腊月": lambda r: _frame(
                "生日是{}", f"{r.choice(['正', '冬', '腊'])}月{r.choice(_CN_DAYS)}"
            ),
            "festival day": lambda r: _frame("{}那天住的院", r.choice(_FESTIVALS)),
            "month-day": lambda r: _frame(
                "{}去复查的", f"{r.randint(1, 12)}月{r.randint(1, 28)}号"
            ),
        },
    ),
    Row(
        "postal codes",
        {
            "邮编": lambda r: _frame("邮编{}，寄到家里", _digits(r, 6)),
            "邮政编码：": lambda r: _frame("邮政编码：{}", _digits(r, 6)),
            "郵遞區號 (Taiwan)": lambda r: _frame(
                "郵遞區號 {} 台北市", _digits(r, 3) + _digits(r, 2)
            ),
        },
    ),
    Row(
        "GPS coordinates",
        {
            "decimal pair": lambda r: _frame(
                "我在这里：{}", f"{r.uniform(18, 45):.5f}, {r.uniform(100, 125):.5f}"
            ),
            "decimal with N/E": lambda r: _frame(
                "定位 {}", f"{r.uniform(18, 45):.4f}°N, {r.uniform(100, 125):.4f}°E"
            ),
            "degrees minutes seconds": lambda r: _frame(
                "坐标 {}",
                f"N{r.randint(18, 45)}°{r.randint(0, 59)}′{r.randint(0, 59)}″ "
                f"E{r.randint(100, 125)}°{r.randint(0, 59)}′{r.randint(0, 59)}″",
            ),
        },
    ),
    Row(
        "landmarks near home",
        {
            "家在…旁边": lambda r: _frame("我家就在{}旁边，走路五分钟", r.choice(_LANDMARKS)),
            "家楼下就是…": lambda r: _frame("我家楼下就是{}，很方便", r.choice(_LANDMARKS)),
            "住在…对面": lambda r: _frame("我住在{}对面的小区", r.choice(_LANDMARKS)),
        },
    ),
    Row(
        "school and class",
        {
            "grade and class": lambda r: _frame(
                "孩子在{}，老师说他上课走神",
                f"{r.choice(_SCHOOLS[:4])}{_CN[r.randint(1, 6)]}年级{_CN[r.randint(1, 9)]}班",
            ),
            "junior grade (n)班": lambda r: _frame(
                "儿子在{}，体检说近视", f"{r.choice(_SCHOOLS[:4])}初二({r.randint(1, 12)})班"
            ),
            "kindergarten class": lambda r: _frame(
                "女儿在{}，老是咳嗽", f"{_SCHOOLS[4]}{r.choice(['大', '中', '小'])}班"
            ),
        },
    ),
    Row(
        "certificate, pathology, specimen and appointment numbers",
        {
            "pathology": lambda r: _frame(
                "病理号：{}", f"B{r.randint(2018, 2025)}-{_digits(r, 5)}"
            ),
            "specimen": lambda r: _frame("标本号 {} 已送检", f"S{_digits(r, 10)}"),
            "appointment": lambda r: _frame("预约号#{}，请准时到", _digits(r, 6)),
            "certificate": lambda r: _frame("出生医学证明编号：{}", f"Q{_digits(r, 9)}"),
            "Taiwan licence": lambda r: _frame("醫師證書字號：{}", f"醫字第{_digits(r, 6)}號"),
            "bed": lambda r: _frame("{}的病人昨晚发烧", f"{r.randint(1, 60)}床"),
            "HK HN": lambda r: _frame("HN No. {}", _digits(r, 8)),
        },
    ),
    Row(
        "staff work numbers",
        {
            "工号": lambda r: _frame("我的工号是 {}", f"JS{_digits(r, 5)}"),
            "工號：": lambda r: _frame("護士工號：{}", f"N{_digits(r, 4)}"),
            "Staff ID": lambda r: _frame("Staff ID: {}", f"{_digits(r, 6)}"),
        },
    ),
    Row(
        "platform accounts",
        {
            "WeChat": lambda r: _frame("加我微信{}，发片子", f"wx_{_digits(r, 4)}abc"),
            "QQ": lambda r: _frame("QQ号：{}", _digits(r, 1).replace("0", "1") + _digits(r, 8)),
            "Weibo": lambda r: _frame("微博 {}", f"sunny_{_digits(r, 4)}"),
            "Douyin": lambda r: _frame("抖音号{}是我的", f"dy{_digits(r, 6)}"),
            "Kuaishou": lambda r: _frame("快手号 {}", f"ks_{_digits(r, 5)}"),
            "Xiaohongshu": lambda r: _frame("小红书：{}", f"lily_{_digits(r, 3)}x"),
            "DingTalk": lambda r: _frame("钉钉 {}", f"ding{_digits(r, 5)}"),
            "Alipay": lambda r: _frame("支付宝账号 {}", f"pay_{_digits(r, 5)}"),
            "LINE": lambda r: _frame("LINE ID: {}", f"may_tw{_digits(r, 2)}"),
            "WhatsApp": lambda r: _frame("WhatsApp {}", f"+852{r.choice('569')}{_digits(r, 7)}"),
            "Telegram": lambda r: _frame("tg: {}", f"@jack{_digits(r, 3)}"),
        },
    ),
    Row(
        "evasive platform spellings",
        {
            "威信": lambda r: _frame("威信 {}", f"chen_{_digits(r, 4)}"),
            "vx": lambda r: _frame("vx：{}", f"zhao{_digits(r, 4)}"),
            "V信": lambda r: _frame("V信 {}", f"abc_{_digits(r, 4)}"),
            "薇❤": lambda r: _frame("薇❤{} 备注", f"lucy{_digits(r, 4)}"),
            "扣扣": lambda r: _frame("扣扣：{}", "5" + _digits(r, 8)),
            "企鹅": lambda r: _frame("企鹅 {}", "3" + _digits(r, 8)),
            "spelled letter by letter": lambda r: _frame(
                "微信 {} 谢谢", " ".join(f"wxid{_digits(r, 4)}")
            ),
            "spoken digits": lambda r: _frame("扣扣{}", _spoken("5" + _digits(r, 8))),
        },
    ),
    Row(
        "Latin-script names",
        {
            "English first name": lambda r: _frame("我叫{}，最近老咳嗽", r.choice(_ENGLISH_FIRST)),
            "English frame": lambda r: _frame(
                "Hi doctor, this is {}, I have a fever", r.choice(_ENGLISH_FIRST)
            ),
            "romanised Cantonese": lambda r: _frame("患者{}，男，52岁", r.choice(_CANTONESE)),
            "romanised Hokkien": lambda r: _frame("我是{}的女儿", r.choice(_HOKKIEN)),
        },
    ),
    Row(
        "pinyin names",
        {
            "lower case": lambda r: _frame(
                "我叫{}，头疼三天", f"{r.choice(list(_PINYIN.values()))} {r.choice(_PINYIN_GIVEN)}"
            ),
            "capitals": lambda r: _frame(
                "患者{}，男",
                f"{r.choice(list(_PINYIN.values()))} {r.choice(_PINYIN_GIVEN)}".upper(),
            ),
            "CamelCase": lambda r: _frame(
                "我叫{}，发烧了",
                r.choice(list(_PINYIN.values())).title() + r.choice(_PINYIN_GIVEN).title(),
            ),
            "initials": lambda r: _frame(
                "我是{}，想问下报告", "".join(r.choice("BCDFGHJLMNPQRSTWXYZ") for _ in range(3))
            ),
        },
    ),
    Row(
        "IDs grouped 4-4-4-4-2 and other disguised numbers",
        {
            "ID in fours": lambda r: _frame("身份证号 {} 已核对", _groups(_resident_id(r), 4, " ")),
            "phone in spoken digits": lambda r: _frame("电话{}，白天打", _spoken(_mobile(r))),
            "phone with emoji": lambda r: _frame("手机{}谢谢", _groups(_mobile(r), 4, "🌟")),
            "phone over two lines": lambda r: (
                lambda m: (f"联系电话{m[:7]}\n{m[7:]}", f"{m[:7]}\n{m[7:]}")
            )(_mobile(r)),
            "zero-width inside a name": lambda r: (
                lambda n: (f"我叫{n[0]}\u200b{n[1:]}，咳嗽", f"{n[0]}\u200b{n[1:]}")
            )(_name(r)),
        },
    ),
    Row(
        "Hong Kong and Macau phones",
        {
            "HK mobile +852": lambda r: _frame(
                "香港電話 {}", f"+852 {r.choice('569')}{_digits(r, 3)} {_digits(r, 4)}"
            ),
            "HK landline": lambda r: _frame("電話 {}", f"2{_digits(r, 3)} {_digits(r, 4)}"),
            "Macau +853": lambda r: _frame("澳門電話 {}", f"+853 6{_digits(r, 3)} {_digits(r, 4)}"),
        },
    ),
    Row(
        "Taiwan, Hong Kong and Macau addresses",
        {
            "Taiwan 路段巷弄號樓": lambda r: _frame(
                "住在台北市大安區{}",
                f"復興南路一段{r.randint(1, 400)}巷{r.randint(1, 20)}弄"
                f"{r.randint(1, 60)}號{r.randint(2, 15)}樓",
            ),
            "Taiwan 號之N": lambda r: _frame(
                "台中市西屯區{}",
                f"台灣大道三段{r.randint(1, 999)}號{r.randint(2, 20)}樓之{r.randint(1, 9)}",
            ),
            "HK estate block floor flat": lambda r: _frame(
                "住在沙田{}",
                f"禾輋邨豐順樓{r.randint(2, 30)}樓{r.randint(1, 30):02d}{r.randint(1, 9)}室",
            ),
            "Macau 座樓": lambda r: _frame(
                "澳門氹仔{}", f"海洋花園第{r.randint(1, 9)}座{r.randint(2, 30)}樓{r.choice('ABCD')}"
            ),
            "estate dashed unit": lambda r: _frame(
                "我在{}，出门右转就是药店",
                f"{r.choice(_ESTATES)}{r.randint(1, 40)}-{r.randint(1, 6)}-"
                f"{r.randint(1, 30)}0{r.randint(1, 9)}",
            ),
        },
    ),
]
