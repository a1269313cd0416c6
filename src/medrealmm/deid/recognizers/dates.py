"""Dates: full numeric, Chinese-numeral and English dates, and birth dates given in part."""

from __future__ import annotations

import re
from datetime import date

from medrealmm.deid.recognizer import RegexRecognizer
from medrealmm.deid.spans import EntityType

_CN_DIGIT = "〇零一二三四五六七八九"


def _valid_numeric_date(match: re.Match[str]) -> EntityType | None:
    year, month, day = (int(match.group(g)) for g in ("y", "m", "d"))
    if year < 100:  # 05年4月2日: a two-digit year is this century's or the last
        year += 2000 if year <= date.today().year % 100 else 1900
    orders = [(month, day)]
    if "first" in match.groupdict():  # year last: 03/15/1987 (US) or 15/03/1987 (Europe)
        orders = [(month, day), (day, month)]
    for m, d in orders:
        try:
            date(year, m, d)
        except ValueError:
            continue
        return EntityType.DATE
    return None


# A time may follow a date with or without a space: OCR often runs them together. Forms
# print it as 14:30 or 00时, people write 下午3点20分.
_HOUR = r"(?:[01]?\d|2[0-3])"
_TIME = (
    rf"(?:[\sT]*{_HOUR}:[0-5]\d(?::[0-5]\d)?"
    rf"|\s*(?:上午|下午|中午|晚上|凌晨|早上)?{_HOUR}[时点](?:[0-5]?\d分)?)?"
)
# Every numeric date starts with a digit: checked first, it lets each scan pass other
# characters at once.
_DIGIT_FIRST = r"(?=\d)"
FULL_DATE = RegexRecognizer(
    name="full_date",
    gate=re.compile(r"\d\d"),
    type=EntityType.DATE,
    patterns=[
        re.compile(
            _DIGIT_FIRST
            + r"(?<![\d.])(?P<y>(?:19|20)?\d{2})\s*年\s*(?P<m>\d{1,2})\s*月"
            + r"\s*(?P<d>\d{1,2})\s*[日号號]"
            + _TIME
        ),
        re.compile(
            _DIGIT_FIRST + r"(?<![\d.])(?P<y>(?:19|20)\d{2})(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)"
            r"(?P<d>3[01]|[12]\d|0?[1-9])" + _TIME + r"(?![\d.])"
        ),
        # Compact 20230506: month and day must be valid, so most other 8-digit numbers fail.
        re.compile(
            _DIGIT_FIRST
            + r"(?<![\d.A-Za-z])(?P<y>(?:19|20)\d{2})(?P<m>0[1-9]|1[0-2])(?P<d>0[1-9]|[12]\d|3[01])"
            r"(?![\d.A-Za-z])"
        ),
        # Two-digit years with dots, dashes or slashes (93.01.06, 23.3.15, 02-10-07): three parts
        # and a valid month and day, so lab values (12.5) and ranges (3.5-5.5) never match.
        re.compile(
            _DIGIT_FIRST + r"(?<![\d.A-Za-z])(?P<y>\d{2})(?P<sep>[./-])"
            r"(?P<m>1[0-2]|0?[1-9])(?P=sep)(?P<d>3[01]|[12]\d|0?[1-9])" + _TIME + r"(?![\d.A-Za-z])"
        ),
        # The year last, as foreign records and some devices print it (03/15/1987,
        # 15.03.1987): month and day in either order, one of them a valid date.
        re.compile(
            _DIGIT_FIRST + r"(?<![\d.A-Za-z/])(?P<first>(?P<m>\d{1,2}))(?P<sep>[./-])"
            r"(?P<d>\d{1,2})(?P=sep)"
            r"(?P<y>(?:19|20)\d{2})" + _TIME + r"(?![\d.A-Za-z/])"
        ),
    ],
    validate=_valid_numeric_date,
)
# Dates in English (Nov 26, 1951; 4 July 2019), as foreign records and devices print them.
_MONTH_NAME = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?(?![a-z])"
)
ENGLISH_DATE = RegexRecognizer(
    name="english_date",
    gate=re.compile(r"(?:19|20)\d\d"),
    type=EntityType.DATE,
    patterns=[
        re.compile(
            rf"(?<![A-Za-z]){_MONTH_NAME}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(?:19|20)\d{{2}}(?!\d)"
        ),
        re.compile(
            rf"(?<![\d.])\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH_NAME},?\s+(?:19|20)\d{{2}}(?!\d)"
        ),
    ],
)
_CN_SMALL = "一二三四五六七八九十"
# Any mix of Chinese and Arabic numerals (二〇〇六年七月3日, 2008年六月20号, a two-digit year:
# 八七年三月十五号), with a time.
FULL_DATE_CHINESE_NUMERALS = RegexRecognizer(
    name="full_date_chinese_numerals",
    gate=re.compile("年"),
    type=EntityType.DATE,
    patterns=[
        re.compile(
            rf"(?:(?<![{_CN_DIGIT}])[{_CN_DIGIT}]{{2}}(?:[{_CN_DIGIT}]{{2}})?|(?<!\d)(?:19|20)\d{{2}})"
            r"\s*年\s*"
            rf"(?:[{_CN_SMALL}]{{1,2}}|\d{{1,2}})\s*月\s*(?:[{_CN_SMALL}]{{1,3}}|\d{{1,2}})\s*[日号號]"
            + _TIME
        )
    ],
)

# A birth date given in part (出生年月：1987年3月, 1987-03生, 生日3月15日): a month with its
# year, or a day with its month, of someone's birth identifies as a full date does; only
# with a birth word, since 2023年3月 alone is when a symptom began.
_YEAR = rf"(?:(?:19|20)\d{{2}}|[{_CN_DIGIT}]{{2,4}}|\d{{2}})"
_MONTH_NUMBER = rf"(?:1[0-2]|0?[1-9]|十[一二]?|[{_CN_SMALL}])"
_DAY_NUMBER = rf"(?:3[01]|[12]\d|0?[1-9]|[{_CN_SMALL}]{{1,3}})"
_PART_DATE = (
    rf"(?:{_YEAR}\s*[年\-/.]\s*{_MONTH_NUMBER}\s*月?(?:\s*{_DAY_NUMBER}\s*[日号號])?"
    rf"|{_MONTH_NUMBER}\s*月\s*{_DAY_NUMBER}\s*[日号號])"
)
BIRTH_DATE_IN_PART = RegexRecognizer(
    name="birth_date_in_part",
    gate=re.compile("生"),
    type=EntityType.DATE,
    patterns=[
        re.compile(
            r"(?:出生年月日?|出生日期|出生时间|出生于|出生在|生日|生于)(?:是|为)?[:：\s]*"
            rf"(?P<v>{_PART_DATE})"
        ),
        re.compile(rf"(?P<v>{_PART_DATE})(?=\s*(?:出生|生人|生(?:[，。,.;；\s]|$)))"),
    ],
    group="v",
)


# -- dates without a year, and a year with its month ----------------------------------
# HIPAA counts every element of a date but the year as identifying: a month and day (3月15号,
# 三月十五日, 3月15號) or a year and month (2023年3月, 23年3月, 八七年三月, 2023.3) tell when
# someone was seen. Always masked with a Chinese day or month word; written with numbers and
# a separator only (3.15, 3/15, 3-15) they are also a lab value, a ratio or a range, so there
# a date word must stand next to them (see ``_NUMERIC_MONTH_DAY_CUES``).
_CN_DAY = rf"(?:[{_CN_SMALL}]{{1,3}}|3[01]|[12]\d|0?[1-9])"
_CN_MONTH = rf"(?:十[一二]?|[{_CN_SMALL}]|1[0-2]|0?[1-9])"
MONTH_DAY = RegexRecognizer(
    name="month_day",
    gate=re.compile("月"),
    type=EntityType.DATE,
    patterns=[
        re.compile(
            rf"(?=[\d{_CN_SMALL}])(?<![\d{_CN_SMALL}〇零两兩个個每上下本这這那])"
            rf"{_CN_MONTH}\s*月\s*{_CN_DAY}\s*(?:[日号號](?!\s*[A-Za-z]?\d)|(?=[至到\-~～—]\s*\d))"
            + _TIME
        ),
    ],
)
YEAR_MONTH = RegexRecognizer(
    name="year_month",
    gate=re.compile(r"年|(?:19|20)\d\d[./-]"),
    type=EntityType.DATE,
    patterns=[
        re.compile(
            rf"(?=[\d{_CN_DIGIT}])(?:(?<![{_CN_DIGIT}\d])[{_CN_DIGIT}]{{2}}(?:[{_CN_DIGIT}]{{2}})?|(?<![\d.])(?:19|20)\d{{2}}|(?<![\d.诊診史经經病有近约約])\d{{2}})"
            rf"\s*年\s*{_CN_MONTH}\s*月"
            # not a duration: 确诊10年3月余, 病史20年3月多
            r"(?!\s*(?:余|多|左右|以来|来|了|个|個))"
        ),
        re.compile(r"(?<![\d.])(?:19|20)\d{2}(?P<sep>[./-])(?:1[0-2]|0?[1-9])(?![\d.]|(?P=sep)\d)"),
    ],
)

_NUMERIC_MONTH_DAY = (
    r"(?<![\d.\-/A-Za-z:])(?P<m>1[0-2]|0?[1-9])(?P<sep>[./\-·])(?P<d>3[01]|[12]\d|0?[1-9])"
    r"(?![\d%]|[./\-]\d)(?P<day>[号號日](?![均剂劑服]))?"
)
# Words that make a bare month-day a date: before it (于3.15, 截至3/15, 预约3-15) or right
# after it (3.15复查, 3/15那天, 3-15号, 3.15之前). Not 在/到/是 before, nor 左右/以下 after:
# 控制在6.5以下 and 降到3.15 are values.
_BEFORE_DATE = re.compile(
    r"(?:(?<![低高大小等少多介位])[于於]|自|截至|截止|日期|时间|時間|预约|預約|约了|約了|定于|定於|从|從|直到|上次|下次|这次|這次|"
    r"那天是|生日是?|出生)[:：\s]*$"
)
_AFTER_DATE = re.compile(
    r"\s*(?:那天|当天|當天|那日|号|號|日(?![均剂劑服])|开始|開始|那次|做|复查|複查|复诊|複診|手术|手術|"
    r"住院|出院|入院|就诊|就診|检查|檢查|挂号|掛號|来|來|去|晚上|早上|上午|下午|中午|凌晨|"
    r"起|之前|以前|之后|以后|之後|以後|生日|出生)"
)


_UNIT_AFTER = re.compile(r"\s*(?:[A-Za-zμ%‰℃°×*^]|毫|微|克|升|单位|單位|次|片|粒|岁|歲|倍|分|度)")


_VALUE_BEFORE = re.compile(
    r"(?:降|升|涨|漲|掉|控制|稳定|穩定|维持|維持|保持|达|達|超过|超過|低于|低於|高于|高於|大于|大於|"
    r"小于|小於|不到|接近|约|約|大约|大約)[了到在]?\s*$"
)


def _month_day_in_context(match: re.Match[str]) -> EntityType | None:
    text = match.string
    if _UNIT_AFTER.match(text, match.end()):
        return None  # 低于2.6mmol/L: a value and its unit
    if _VALUE_BEFORE.search(text, max(0, match.start() - 6), match.start()):
        return None  # 降到6.5以后, 控制在7.1之前: a value reached
    if match.group("day"):
        return EntityType.DATE  # 3-15号
    if _BEFORE_DATE.search(text, max(0, match.start() - 6), match.start()):
        return EntityType.DATE
    if _AFTER_DATE.match(text, match.end()):
        return EntityType.DATE
    return None


NUMERIC_MONTH_DAY = RegexRecognizer(
    name="numeric_month_day",
    gate=re.compile(r"\d[./\-·]\d"),
    type=EntityType.DATE,
    patterns=[re.compile(_DIGIT_FIRST + _NUMERIC_MONTH_DAY + _TIME)],
    validate=_month_day_in_context,
)

# Taiwan's Republic-of-China years (民國112年3月15日, 112/03/15, 112.3.15: 1911 plus the year), as
# Taiwanese records and ID cards print them; three digits 100-139 or after 民國.
ROC_DATE = RegexRecognizer(
    name="roc_date",
    gate=re.compile(r"民[國国]|1[0-3]\d\s*[年/.\-]"),
    type=EntityType.DATE,
    patterns=[
        re.compile(
            r"(?:民[國国]\s*(?P<y1>\d{2,3})|(?<![\d.])(?P<y2>1[0-3]\d))\s*年\s*"
            r"(?P<m>1[0-2]|0?[1-9])\s*月(?:\s*(?P<d>3[01]|[12]\d|0?[1-9])\s*[日号號])?"
        ),
        # with slashes any width (112/3/15); with dots or dashes two-digit parts (112.03.15)
        re.compile(
            r"(?<![\d.\-/第])(?P<y2>1[0-3]\d)(?:/(?P<m>1[0-2]|0?[1-9])/(?P<d>3[01]|[12]\d|0?[1-9])"
            r"|(?P<sep>[.\-])(?:1[0-2]|0[1-9])(?P=sep)(?:3[01]|[12]\d|0[1-9]))(?![\d.]|[./\-]\d)"
        ),
    ],
)


# Ages over 89 (HIPAA Safe Harbor: an age over 89 is an identifier, an age of 89 or below is
# not): digits or Chinese numerals before 岁/周岁/歲 or years old, or after an age label.
_ONE_NINE = "[一二三四五六七八九]"
_OLD_CN = rf"(?:九十{_ONE_NINE}?|一百(?:零?{_ONE_NINE}|一十?{_ONE_NINE}?|二十)?)"
_OLD = r"(?:9\d|1[01]\d|120)"
AGE_OVER_89 = RegexRecognizer(
    name="age_over_89",
    gate=re.compile(r"9\d|1[01]\d|120|九十|一百"),
    type=EntityType.DATE,
    patterns=[
        re.compile(
            rf"(?P<v>(?<![\d.])(?:{_OLD}|{_OLD_CN})(?:多|来)?\s?(?:周岁|岁|歲|高龄|高齡)"
            rf"|(?<![\d.]){_OLD}(?:\s?(?:years?|yrs?)[\s-]?old|\s?y/?o\b|\s?yrs?\b))",
            re.IGNORECASE,
        ),
        re.compile(
            rf"(?:年龄|年齡|享年|高寿|高壽|[Aa]ge)[\s:：]*(?P<v>(?:{_OLD}|{_OLD_CN})(?![\d.]))"
        ),
    ],
    group="v",
)

# Month and day in the lunar calendar (农历八月十五, 腊月初八, 正月十五, 廿三), and a day named
# by its festival where something happened on it (中秋节那天, 端午节做的手术, 大年初三): HIPAA's
# "all elements of dates" holds both, a month-day written another way.
_LUNAR_MONTH = r"(?:正|冬|腊|臘|十[一二]|[一二三四五六七八九十])月"
_LUNAR_DAY = (
    rf"(?:初(?:{_ONE_NINE}|十)|十{_ONE_NINE}|二十{_ONE_NINE}?|廿{_ONE_NINE}|[二三]十|十)"
    r"(?:日|号|號)?"
)
LUNAR_DATE = RegexRecognizer(
    name="lunar_date",
    gate=re.compile(r"月"),
    type=EntityType.DATE,
    patterns=[
        re.compile(
            rf"(?:(?:农历|阴历|旧历|農曆|陰曆|舊曆)\s?)?{_LUNAR_MONTH}{_LUNAR_DAY}"
            r"(?![个個天日号號])"
        ),
        re.compile(r"(?:(?:农历|阴历|農曆|陰曆)\s?)(?:正|冬|腊|臘)月(?![份])"),
    ],
)
_FESTIVALS = (
    "春节|除夕|大年三十|大年初[一二三四五六七八九十]|年初[一二三四五六七八九十]|元宵节?|清明节?|"
    "端午节?|七夕节?|中元节|中秋节?|重阳节?|冬至|腊八节?|小年|元旦|国庆节?|劳动节|五一|"
    "圣诞节?|平安夜|情人节|儿童节|六一|妇女节|三八节|母亲节|父亲节|教师节|感恩节|万圣节|跨年夜?"
)
FESTIVAL_DATE = RegexRecognizer(
    name="festival_date",
    gate=re.compile(r"节|除夕|年|元宵|清明|端午|七夕|中秋|重阳|冬至|腊八|元旦|五一|六一|平安夜"),
    type=EntityType.DATE,
    patterns=[
        re.compile(
            rf"(?P<v>(?:今年|去年|前年|那年)?(?:{_FESTIVALS}))"
            # the day something happened to the person, not a deadline or a season (冬至就能到,
            # 春节后, 春节期间)
            r"(?=那天|当天|那晚|那会|晚上|早上|上午|下午|中午|凌晨|前一天|后一天|的时候|"
            r"开始|住|去的|做的|做了|来的|回的|发的|发烧|出生|摔|查出|生的|吃了|喝了)"
        )
    ],
    group="v",
)
