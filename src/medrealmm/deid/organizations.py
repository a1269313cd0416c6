"""Employers and schools: a workplace or a school narrows a person down as a district does.

Masked as ``[ORG]``. Two shapes, both open-class (no list of companies or schools):

* a proper noun ending in an organisation word (华为技术有限公司, 招商银行徐汇支行, 育才中学,
  阳光幼儿园, 市二中): the noun before the suffix must be more than a generic word (一家公司,
  保险公司, 上大学 stay);
* an unknown proper noun in a workplace frame (在富士康上班, 单位是鸿达物流, 就读于…): the
  frame says it is an organisation even without a suffix. A place jieba knows (在深圳上班) is a
  city and stays, as cities do everywhere in this project.

Hospitals are not here: they have their own recognizers and type, and the longer span wins an
overlap (四川大学华西医院 stays one HOSPITAL).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from medrealmm.deid.names import _word_tags, is_common_word, segment
from medrealmm.deid.recognizer import gated
from medrealmm.deid.spans import EntityType, Span, words

_CJK = "\u4e00-\u9fff"
_NOUN_CHAR = re.compile(f"[{_CJK}A-Za-z0-9]")
_PAIRS = re.compile("..?")
# Organisation words, longest first so 有限公司 wins over 公司.
_SUFFIXES = sorted(
    words(
        "有限责任公司 股份有限公司 有限公司 公司 集团 银行 支行 分行 营业部 信用社 大学 学院 "
        "职业技术学院 中学 小学 幼儿园 学校 中专 职高 技校 研究院 研究所 事务所 工厂 厂 "
        "分公司 子公司 门店 专卖店 超市 酒店 商场 派出所 街道办 居委会 村委会 委员会 "
        "出版社 报社 电视台 电台 体育馆 图书馆 中心小学 实验学校 外国语学校 工作室 旅行社 "
        # traditional characters are read as simplified (``text.plain_text``): 集團 as 集团
        "信用合作社"
    ),
    key=len,
    reverse=True,
)
# Characters that end the noun before a suffix when scanning left: function words, verbs of
# going and studying, numerals of counting, punctuation.
_NOT_IN_NAME = set(
    "的了是在和与及就也都还又说我你他她它们这那哪每个些家里外上下去到从于读考进念找做当叫"
    "有没不很太请问吗呢吧啊呀给让被把对向跟所以但如果因和或者以及其该本某啥什么怎"
)
# What a suffix's noun may be without naming anything: a kind of business, a size, an owner.
_GENERIC = frozenset(
    words(
        "保险 医药 药 科技 网络 物流 快递 外卖 外资 外企 国企 私企 民营 私营 国有 合资 大 小 "
        "普通 重点 一般 附近 当地 本地 老家 省 市 县 区 镇 乡 村 新 老 好 名牌 985 211 "
        "公立 私立 国际 双语 寄宿 贵族 建筑 装修 房地产 地产 广告 贸易 培训 教育 咨询 "
        "互联网 游戏 软件 汽车 化工 电子 食品 服装 纺织 钢铁 机械 制药 药品 医疗器械 "
        "上市 小型 中型 大型 跨国 全日制 职业 技术 艺术 体育 医学 医科 师范 农业 工业 "
        "理工 财经 政法 民族 商业 开放 老年 成人 函授 夜 电 网 银 工地 日托 早教 兴趣"
    )
)
# A suffix that is only part of a longer word: 大学生, 小学生, 中学时, 公司里 (fine), 银行卡.
_WORD_AFTER = re.compile(
    "(?:生|时|期间|阶段|老师|同学|毕业|学历|文凭|卡|账户|账号|流水|利率|贷款|理财|App|APP|app)"
)
_SUFFIX_RE = re.compile("|".join(map(re.escape, _SUFFIXES)))
# 市二中, 十一中, 育才二小: an ordinal school (the noun before it is found as for suffixes).
_SCHOOL_GATE = re.compile("[中小]")  # every match of _ORDINAL_SCHOOL holds one
_ORDINAL_SCHOOL = re.compile("[一二三四五六七八九十]{1,3}[中小](?![学文医药午间心年期段旬号时])")
# A bracketed English or short name inside (雅莱（Y'OREAL）, 华润（集团）…), its closing
# bracket sometimes lost: any letters but a clause break.
_BRACKETED = r"[（(][^（()）\s，。,；;！!？?]{1,16}?[）)]?"
# A brand in Latin letters, with an apostrophe, a hyphen, accents or a number before it
# (Fami'Mart, Café, 7-Eleven); one word, as a place of two (New York) is no employer.
_LATIN = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff"
_BRAND = rf"(?:\d{{1,2}}-)?[{_LATIN}]+(?:['’&\-][{_LATIN}]+)*"
_NAME_UNIT = f"(?:[{_CJK}]|{_BRAND})"
_ORG_NOUN = f"(?P<org>{_NAME_UNIT}{{1,12}}?(?:{_BRACKETED}{_NAME_UNIT}{{0,12}}?)?)"
_BRACKET_RE = re.compile(r"[（(][^（()）]{0,16}(?:[）)]|$)")  # closed, or left open at the end
# A workplace frame around an unknown noun: 在X上班, 单位是X, 就读于X.
_AT_WORK = "工作(?!室)"  # 在…工作, not the studio of 在…工作室
_WORK_FRAMES = (
    re.compile(f"在{_ORG_NOUN}(?=上班|{_AT_WORK}|打工|实习|任职|做事|干活|上学|读书|念书)"),
    re.compile(
        "(?:就职于|任职于|供职于|就读于|单位是|单位[:：]|工作单位[:：是]?|公司是|学校是)\\s*"
        f"{_ORG_NOUN}(?=上班|{_AT_WORK}|[，。,.；;！!？?\\s]|$)"
    ),
    # a workplace's check-up (单位X体检): the employer, whatever its name
    re.compile(f"(?<![计记位])单位{_ORG_NOUN}(?=组织的?体检|体检|年检|安排的?体检)"),
)
# A frame's noun may hold 上 and 下 (上海, 下沙): the frame, not the character, ends it.
_NOT_IN_FRAMED = _NOT_IN_NAME - set("上下")
# A label right before a suffix's noun (工作单位：和泰信息有限公司): the noun starts at the
# label, whatever function character it begins with.
_LABEL_BEFORE = re.compile(
    "(?:工作单位|单位|就职于|任职于|供职于|就读于|公司|学校|工作)[:：是为]\\s*"
    f"(?P<rest>[{_CJK}A-Za-z0-9]{{0,3}})$"
)
# Nouns a workplace frame holds that are no organisation: places of work, rooms, everyday words.
_NOT_ORG = frozenset(
    words(
        "家里 家 单位 公司 学校 医院 工地 厂里 外地 本地 老家 这里 那里 那边 这边 外面 城里 "
        "乡下 农村 国外 外企 国企 网上 线上 线下 店里 车间 办公室 门诊 病房 食堂 路上 "
        "深圳 北京 上海 广州"
    )
)


def _noun_before(text: str, end: int) -> int:
    """Where the noun ending at ``end`` begins: at most ten characters back, stopping at a
    function character or anything that is not Han, a Latin letter or a digit; a bracketed
    name (資華（生資堂）) is passed over whole."""
    start, taken = end, 0
    while start > 0 and taken < 10:
        c = text[start - 1]
        if c in "）)":
            opening = _opening_before(text, start - 1)
            if opening is None:
                break
            start = opening
            continue
        if c in _NOT_IN_NAME or not _NOUN_CHAR.match(c):
            break
        start, taken = start - 1, taken + 1
    if start < end and text[start] in _ADMINISTRATIVE and start > 0:
        # 县实验小学 with its county cut off at a function character its name holds (于都县,
        # 成都市, 首都): the two characters before the unit are the place's name.
        for _ in range(2):
            c = text[start - 1] if start > 0 else ""
            if not c or c in _PLACE_STOP or not _NOUN_CHAR.match(c):
                break
            start -= 1
    return start


# The administrative units a noun may start with once its place name is cut off, and what
# ends a place name for certain (a particle, a pronoun, a verb of going or saying).
_ADMINISTRATIVE = frozenset("县市区镇乡省州旗")
_PLACE_STOP = frozenset(
    "的了是在和与及我你他她它们这那每个些就也又说到从去读考进念找做当叫有没不很给让被把对向跟"
)


def _opening_before(text: str, closing: int) -> int | None:
    """The bracket that the one at ``closing`` closes, at most 16 characters back."""
    for i in range(closing - 1, max(-1, closing - 18), -1):
        if text[i] in "（(":
            return i if i < closing - 1 else None
        if text[i] in "）)，。,；;":
            return None
    return None


def _outside_brackets(noun: str) -> str:
    return _BRACKET_RE.sub("", noun)


def _specific(noun: str) -> bool:
    """Whether a suffix's noun names one organisation (华为, 育才, 招商) rather than a kind;
    a bracketed part (（外资）) says nothing either way."""
    noun = _outside_brackets(noun)
    if len(noun) < 2 or noun in _GENERIC:
        return False
    if all(part in _GENERIC for part in _PAIRS.findall(noun)):
        return False  # 医药科技, 国际双语: kinds put together
    return not noun.isdigit()


@dataclass
class OrganizationRecognizer:
    """Employers and schools (``[ORG]``): a specific noun + an organisation word, an ordinal
    school, or an unknown proper noun in a workplace frame."""

    name: str = "organization"

    def find(self, text: str) -> Iterator[Span]:
        for match in _SUFFIX_RE.finditer(text):
            if _WORD_AFTER.match(text, match.end()):
                continue
            start = _noun_before(text, match.start())
            label = _LABEL_BEFORE.search(text, max(0, start - 12), start)
            if label is not None:
                start = label.start("rest")
            if not _specific(text[start : match.start()]):
                continue
            end = _chain_end(text, match.end(), match.group())
            yield self._span(text, start, end)
        for match in gated(_SCHOOL_GATE, _ORDINAL_SCHOOL, text):
            start = _noun_before(text, match.start())
            if start < match.start():
                yield self._span(text, start, match.end())
        for match in (m for frame in _WORK_FRAMES for m in frame.finditer(text)):
            start, end = match.span("org")
            noun = _outside_brackets(text[start:end])
            if len(noun) < 2 or noun in _NOT_ORG or noun in _GENERIC or _function_word_in(noun):
                continue
            tag = _word_tags().get(noun)
            proper = tag is None or tag in ("nt", "nz", "nr", "nrt", "nrfg")
            if not proper and not (tag == "n" and _named_kind(noun)):
                continue  # 在北京上班, 在外面工作: a city or an ordinary word
            yield self._span(text, start, end)

    def _span(self, text: str, start: int, end: int) -> Span:
        return Span(
            start=start, end=end, type=EntityType.ORG, text=text[start:end], source=self.name
        )


# Words a function character may sit in inside a framed name: a noun, a place, a verbal noun
# or an abbreviation (本溪钢铁, 中国粮油进出口, 国家电网), never a pronoun (我们公司).
_NAME_WORD_TAGS = ("n", "vn", "j")


def _function_word_in(noun: str) -> bool:
    """A function character of ``_NOT_IN_FRAMED`` in the noun that no noun-like word of the
    dictionary holds: 在我们公司上班 is no name, 在本溪钢铁上班 is. A name with an
    organisation word may open with one standing alone (在和泰信息有限公司上班), unless it
    is a pronoun."""
    if not any(c in _NOT_IN_FRAMED for c in noun):
        return False
    pieces = segment(noun)
    if _leading_function_character(noun, pieces[0]):
        pieces = pieces[1:]
    for word in pieces:
        if any(c in _NOT_IN_FRAMED for c in word):
            tag = _word_tags().get(word) if len(word) > 1 else None
            if tag is None or not tag.startswith(_NAME_WORD_TAGS):
                return True
    return False


_PRONOUN_CHARS = frozenset("我你他她它们这那哪每个些某本该其啥什么怎")


def _leading_function_character(noun: str, first: str) -> bool:
    """The noun's first word is one function character (和|泰信息…) and the noun ends with an
    organisation word: the frame before it says where the name starts."""
    return len(first) == 1 and first not in _PRONOUN_CHARS and noun.endswith(tuple(_SUFFIXES))


def _named_kind(noun: str) -> bool:
    """A dictionary noun that is a name and a kind of business (东风|汽车, 红星|机械): the
    dictionary lists some makers so, but a kind after a specific name is a company."""
    head, kind = noun[:-2], noun[-2:]
    return len(head) >= 2 and kind in _GENERIC and _specific(head)


# A branch after the organisation (招商银行|徐汇支行, 华为|南京分公司): one more noun + suffix.
_BRANCH = re.compile(f"[{_CJK}]{{1,6}}?(?:支行|分行|营业部|分公司|分店|分部|校区|分校)")


# A university's college or department (燕山大学|里仁学院, …大学|计算机系): any name but a
# function character, and not an ordinary word (…大学|关系).
_COLLEGE = re.compile(
    f"(?:(?![的了是在和与及就也都还又说我你他她它们这那哪每个些])[{_CJK}]){{1,8}}?"
    "(?:学院|书院|研究生院|医学部|系)"
)


def _chain_end(text: str, end: int, suffix: str) -> int:
    branch = _BRANCH.match(text, end)
    if branch:
        return branch.end()
    college = _COLLEGE.match(text, end) if suffix == "大学" else None
    if college and not is_common_word(college.group()):
        return college.end()
    return end
