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
            + r"\s*(?P<d>\d{1,2})\s*[日号]"
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
        # Two-digit years with dots or dashes (93.01.06, 02-10-07): all three parts two digits
        # and a valid month and day, so lab values (12.5) and ranges (3.5-5.5) never match.
        re.compile(
            _DIGIT_FIRST + r"(?<![\d.A-Za-z])(?P<y>\d{2})(?P<sep>[./-])(?P<m>0[1-9]|1[0-2])(?P=sep)"
            r"(?P<d>0[1-9]|[12]\d|3[01])" + _TIME + r"(?![\d.A-Za-z])"
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
            rf"(?:[{_CN_SMALL}]{{1,2}}|\d{{1,2}})\s*月\s*(?:[{_CN_SMALL}]{{1,3}}|\d{{1,2}})\s*[日号]"
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
    rf"(?:{_YEAR}\s*[年\-/.]\s*{_MONTH_NUMBER}\s*月?(?:\s*{_DAY_NUMBER}\s*[日号])?"
    rf"|{_MONTH_NUMBER}\s*月\s*{_DAY_NUMBER}\s*[日号])"
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
