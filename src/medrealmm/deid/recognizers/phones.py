"""Phones in every layout people write them: mainland mobiles, landlines and service numbers,
numbers abroad with a country code, foreign layouts with no cue, and numbers after a cue.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from medrealmm.deid.recognizer import RegexRecognizer
from medrealmm.deid.spans import EntityType, Span

LANDLINE_PHONE = RegexRecognizer(
    name="landline_phone",
    gate=re.compile(r"\d{3}"),
    type=EntityType.PHONE,
    patterns=[
        # Area code with a separator, or a service number: the separator is what tells a
        # phone from any other long number.
        re.compile(r"(?<![\d.])(?:\(0\d{2,3}\)\s?|0\d{2,3}[-\s])\d{7,8}(?:-\d{1,5})?(?![\d.])"),
        re.compile(r"(?<![\d.])[48]00[-\s]?\d{3}[-\s]?\d{4}(?![\d.])"),
    ],
)


# Phones as people write them: +86 / 0086 / (86) in front, an area code in brackets, digits
# grouped by spaces, dashes, dots or tildes in any grouping, an extension after. What makes
# a candidate a phone is its digits, not its layout: a mobile's 1[3-9] and eleven digits, a
# 400/800 service number, or a landline whose area code and length Google's libphonenumber
# metadata (``phonenumbers``, Apache-2.0) accepts. Lab values and doses never have those.
# A separator is any symbol, space, line break or emoji between digit groups, or a chat
# sticker ([微笑]); letters, Han characters and sentence ends are not.
_SEP = r"(?:[^\w。！？；;:：]|_|\[[^\]\d]{1,6}\])"
# Every match starts with a bracket, a plus or a digit: checking that first lets the scan
# pass other characters cheaply, and changes no match.
_PHONE_START = r"(?=[(（+\d])"
# What people write before an extension: 转 66, 转分机 3172, 分机号 8, ext. 8, x9150, or a dash.
_EXTENSION_WORDS = r"转分机号?|转内线|转|分机号?|内线|ext\.?|x"
_EXTENSION_WORD = rf"(?:{_EXTENSION_WORDS}|-)"
_PHONE_SHAPE_RE = re.compile(
    _PHONE_START + r"(?<!\d)(?<!\d\.)"  # not the decimals of a value (1.13…); Tel.138… is a phone
    rf"(?P<main>(?:[(（]?(?:\+|00)?86[)）]?{_SEP}{{0,3}})?"
    rf"(?:[(（]0[)）]{_SEP}{{0,3}})?"  # the trunk 0 in brackets: (0)10-…, +86 (0)571 …
    rf"(?:[(（]0\d{{2,3}}[)）]{_SEP}{{0,3}})?"
    rf"\d(?:{_SEP}{{0,3}}\d){{6,13}})"
    rf"(?:{_SEP}{{0,3}}{_EXTENSION_WORD}[:：]?{_SEP}{{0,3}}\d{{1,5}})?"
    r"(?![\d])",
    re.IGNORECASE,
)
_MOBILE_DIGITS = re.compile(r"1[3-9]\d{9}")
_SERVICE_DIGITS = re.compile(r"[48]00\d{7}")
_COUNTRY = re.compile(r"^[(（]?(?:\+|00)?86[)）]?(?=\D)")
_TRUNK = re.compile(r"[(（]0[)）]")  # +86 (0)571 …
_DIGIT_GROUP = re.compile(r"\d+")
_COUNTRY_DIGITS = re.compile(r"(?:00)?86")


def phone_digits(candidate: str) -> str | None:
    """The national number a candidate spells, or None where it is no phone: a mobile, a
    400/800 number or a landline libphonenumber holds valid."""
    country = _COUNTRY.match(candidate)
    rest = candidate[country.end() :] if country else candidate
    if country is None and _TRUNK.match(rest.lstrip()):
        # (0)10-8765 4321: the bracketed trunk 0 stands for the country code's absence
        return phone_digits("+86 " + rest.lstrip())
    rest = _TRUNK.sub("", rest)
    groups = _DIGIT_GROUP.findall(rest)
    # Groups of one or two digits are listed values (0.5 1.2 3.4, 150 230 180 20), except an
    # area code written the international way (+86 10 8765 4321).
    # Ten or more single digits are a number spelled out one by one (1 3 8 0 0 …), no list.
    shortest = min(map(len, groups[1:]), default=3)
    spelled = len(groups) >= 10 and max(map(len, groups)) == 1
    if len(groups) > 1 and not spelled and (shortest < 3 or len(groups[0]) < (2 if country else 3)):
        return None
    digits = "".join(groups)
    if country is None and _COUNTRY_DIGITS.match(digits) and len(digits) >= 12:
        digits = digits[4:] if digits.startswith("00") else digits[2:]
    if _MOBILE_DIGITS.fullmatch(digits) or _SERVICE_DIGITS.fullmatch(digits):
        return digits
    if country is not None and not digits.startswith("0"):
        digits = "0" + digits  # +86 571 8765 4321: the trunk 0 is dropped abroad
    if not digits.startswith("0") or not 10 <= len(digits) <= 12:
        return None
    if country is not None or _landline(digits):
        # after +86 nothing but a phone follows, whatever its area code
        return digits
    import phonenumbers

    try:
        number = phonenumbers.parse(digits, "CN")
    except phonenumbers.NumberParseException:
        return None
    return digits if phonenumbers.is_valid_number(number) else None


def _landline(digits: str) -> bool:
    """A Chinese area code and a local number of seven or eight digits. The area code is
    checked, the local length is not: people mistype it and generators make up lengths that
    libphonenumber's per-city metadata refuses (010 with seven digits), yet the number
    identifies someone all the same."""
    for cut in (3, 4):
        area, local = digits[:cut], digits[cut:]
        if len(local) in (7, 8) and local[0] not in "01" and _is_area_code(area):
            return True
    return False


@functools.lru_cache(maxsize=512)
def _is_area_code(area: str) -> bool:
    """Whether libphonenumber holds some local number valid behind ``area``."""
    import phonenumbers

    for local in ("2345678", "23456789"):
        try:  # 00 starts an international prefix: 008… names no country, and parse raises
            number = phonenumbers.parse(area + local, "CN")
        except phonenumbers.NumberParseException:
            return False
        if phonenumbers.is_valid_number(number):
            return True
    return False


@dataclass
class PhoneShapeRecognizer:
    """Phones in any layout (see ``phone_digits``). A candidate run that holds more than the
    phone (25 138…, …5678 3天, two phones in a row) is cut at separators to the phones in it,
    longest first from the left."""

    name: str = "phone_any_shape"

    def find(self, text: str) -> Iterator[Span]:
        original = text
        # 一三八… spells a number too, one digit a character; 一 between Arabic digits is the
        # dash an input method gives for "yi" (139一2345一6789). Both keep every offset.
        text = _spell_digits(text)
        if _THREE_DIGITS.search(text) is None:
            return
        for match in _PHONE_SHAPE_RE.finditer(text):
            lo, hi = match.span("main")
            bounds = [(m.start(), m.end()) for m in _GROUP_GAP.finditer(text, lo, hi)]
            # Where Chinese numerals meet Arabic digits one number ends and another begins
            # (张三13800138000, 第四18612345678): nobody writes one phone in two scripts.
            if _ANY_HAN_DIGIT.search(original, lo, hi):
                bounds += [(i, i) for i in range(lo + 1, hi) if _script_changes(original, i)]
            starts = [lo] + [b for a, b in bounds if _DIGIT.match(text, b)]
            ends = [hi] + [a for a, _ in bounds]
            position = lo
            for first in starts:
                if first < position:
                    continue
                for cut in sorted((e for e in ends if e > first), reverse=True):
                    if phone_digits(text[first:cut]):
                        extension = cut != hi and _EXTENSION.fullmatch(text, cut, hi)
                        stop = match.end() if cut == hi or extension else cut
                        yield Span(
                            start=first,
                            end=stop,
                            type=EntityType.PHONE,
                            text=original[first:stop],
                            source=self.name,
                        )
                        position = stop
                        break


_THREE_DIGITS = re.compile(r"\d{3}|\d \d \d")  # a gate: digits in a row, or spelled
_HAN_DIGIT_CHARS = "〇零幺一二三四五六七八九"
_HAN_DIGITS = str.maketrans(_HAN_DIGIT_CHARS, "001123456789")
_ANY_HAN_DIGIT = re.compile(f"[{_HAN_DIGIT_CHARS}]")
_YI_DASH = re.compile(r"(?<=\d)一(?=\d)")


def _spell_digits(text: str) -> str:
    """``text`` with a dash for 一 between digits and each Chinese digit as its Arabic one,
    offsets unchanged; the cheap checks skip the work in texts that need none."""
    if "一" in text:
        text = _YI_DASH.sub("-", text)
    return text.translate(_HAN_DIGITS) if _ANY_HAN_DIGIT.search(text) else text


def _script_changes(text: str, i: int) -> bool:
    before, after = text[i - 1], text[i]
    return (before in _HAN_DIGIT_CHARS and after.isdecimal()) or (
        before.isdecimal() and after in _HAN_DIGIT_CHARS
    )


_EXTENSION = re.compile(r"\s?-\s?\d{1,5}")
_GROUP_GAP = re.compile(rf"(?<=\d){_SEP}+")
_DIGIT = re.compile(r"\d")
PHONE_ANY_SHAPE = PhoneShapeRecognizer()


def _valid_international(match: re.Match[str]) -> EntityType | None:
    import phonenumbers

    digits = "".join(re.findall(r"\d", match.group("main")))
    by_zeros = match.group().lstrip("(（").startswith("00")
    digits = digits[2:] if by_zeros else digits
    try:
        number = phonenumbers.parse("+" + digits, None)
    except phonenumbers.NumberParseException:
        return None
    # After a plus, a number the country's plan allows in length (+1-483-651-0349) is
    # someone's, whether or not its area code is in service; 00 also starts record numbers,
    # so there the number must be valid.
    held = phonenumbers.is_valid_number if by_zeros else phonenumbers.is_possible_number
    return EntityType.PHONE if held(number) else None


# An extension as numbers abroad write it (x12, ext. 8150), after a number's last digit.
_LATIN_EXTENSION = r"\s?(?:x|ext\.?)\s?\d{1,5}"

# Numbers abroad (+852 9123 4567, +1 (415) 555-2671, 0044 20 7946 0958): a country code other
# than China's, then digit groups that libphonenumber holds valid for that country.
INTERNATIONAL_PHONE = RegexRecognizer(
    name="international_phone",
    gate=re.compile(r"\+\s?[1-9]|00[1-9]"),
    type=EntityType.PHONE,
    patterns=[
        re.compile(
            r"(?P<main>(?<![\d+])[(（]?(?:\+\s?|00)(?!86)[1-9]\d{0,2}[)）]?[\s.\-]*"
            r"(?:[(（]\d{1,4}[)）][\s.\-]*)?\d(?:[\s.\-]?\d){5,13})(?![\d.])"
            rf"(?:{_LATIN_EXTENSION}(?![\d.]))?",
            re.IGNORECASE,
        )
    ],
    validate=_valid_international,
)


# Numbers in a layout of North America or Taiwan, with no cue and no country code: a patient
# abroad gives hers as she writes it at home. Only layouts no dose, value, date or record
# number takes: NANP's 3-3-4 joined by dashes or dots, with its own rules (area code and
# exchange start 2-9: (412)623-3079, 962.952.7601x89555; not 200 250 1000, a list of
# volumes); Taiwan's 0X area code set off by a dash, a bracket or a space before 7-8 digits
# (03-8194875, (02) 5768 4268); its 09XX mobiles with a separator (0921-993518).
# Not inside a longer run of Latin letters, digits or joiners; Han text may touch it
# (号码是412-215-4728).
_NOT_AFTER = r"(?<![A-Za-z0-9_.\-+/])"
# ... nor before a unit: 250-500-1000 mg is a dose escalation.
_NOT_BEFORE = (
    r"(?![A-Za-z0-9_\-/]|\.\d|\s?(?:mg|ml|mcg|μg|ug|g|kg|iu|u|mmol|单位|毫克|毫升|克|片|粒|支|袋|次|滴)"
    r"(?![a-z]))"
)
_FOREIGN_EXTENSION = rf"(?:{_LATIN_EXTENSION})?"
FOREIGN_LAYOUT_PHONE = RegexRecognizer(
    name="foreign_layout_phone",
    gate=re.compile(r"\d[\-.\s)）]\s?\d{3}|\d{10}"),
    type=EntityType.PHONE,
    patterns=[
        re.compile(
            _NOT_AFTER + r"(?:(?:00)?1[\-.\s])?"  # 001-, 1-: the country code dialled from home
            r"(?:\([2-9]\d{2}\)\s?|[2-9]\d{2}(?P<s>[\-.]))[2-9]\d{2}"
            r"(?(s)(?P=s)|[\-.])\d{4}" + _FOREIGN_EXTENSION + _NOT_BEFORE,
            re.IGNORECASE,
        ),
        re.compile(
            _NOT_AFTER
            + r"(?:[(（]0\d[)）]\s?|0\d[\-\s])\d{3,4}[\-\s]?\d{4}"
            + _FOREIGN_EXTENSION
            + _NOT_BEFORE,
            re.IGNORECASE,
        ),
        re.compile(_NOT_AFTER + r"09\d{2}[\-\s]\d{3}[\-\s]?\d{3}" + _NOT_BEFORE),
        # ten digits in one run, as a phone's keypad gives them: no clinical value is that
        # long, and NANP's rules and Taiwan's 09 leave out Unix times (1700000000). Not after
        # a label (门诊号5945623644, 卡号: …): the label's own recognizer types that number.
        re.compile(
            _NOT_AFTER
            + r"(?<![号码卡#:])(?<![号码卡#:]\s)(?:[2-9]\d{2}[2-9]\d{6}|09\d{8})"
            + _NOT_BEFORE
        ),
    ],
)


# A number in any national layout after a word that says a phone follows: Taiwan's 09-…,
# (07) …, America's 841.667.2110 or (831)763-7425x12. Groups after the first hold three digits
# or more, so a list of values (3 5 7) or a date (2023.05.12) is no number.
_PHONE_CUE = (
    r"(?:电话|手机|座机|总机|联系方式|热线|来电|回电|回拨|号码|tel|phone|mobile|call"
    # traditional, and Hong Kong's 手提 (a mobile)
    r"|電話|手機|座機|總機|聯繫方式|聯絡方式|聯絡電話|联络方式|联络电话|熱線|來電|回電|號碼|手提)"
)
_CALL_VERB = r"(?:拨打|致电|打给我?|打到|拨|打这个号?码?|打我)"
# Every match starts with a cue's first character: checked first, it lets the scan pass
# other characters at once.
_PHONE_CUE_FIRST = r"(?=[电手座总联热来回号拨致打tTpPmMcC電總聯熱來號])"
_ANY_LAYOUT = (
    r"(?P<v>[(（]?(?:\+|00)?\d+[)）]?"
    r"(?:(?:[\s\-.~－—]{1,2}|(?<=[)）]))[(（]?\d{3,}[)）]?){0,4}"
    rf"(?:\s?{_EXTENSION_WORD}\s?\d{{1,5}})?)(?!\d)(?!\.\d)"
)


# Where a number's extension begins (not at a dash: a dash also joins its digit groups).
_EXTENSION_START = re.compile(rf"\s?(?:{_EXTENSION_WORDS})", re.IGNORECASE)


def _seven_to_fifteen_digits(match: re.Match[str]) -> EntityType | None:
    number = _EXTENSION_START.split(match.group("v"), maxsplit=1)[0]
    return EntityType.PHONE if 7 <= sum(c.isdigit() for c in number) <= 15 else None


PHONE_IN_ANY_LAYOUT = RegexRecognizer(
    name="phone_in_any_layout",
    gate=re.compile(_PHONE_CUE_FIRST + f"(?:{_PHONE_CUE}|打|拨|致电)", re.IGNORECASE),
    type=EntityType.PHONE,
    patterns=[
        re.compile(
            _PHONE_CUE_FIRST
            + rf"(?:{_PHONE_CUE}(?:号码|号)?(?:也|还)?\s*(?:就是|是|为)?[:：.】\]]{{0,2}}"
            rf"|{_CALL_VERB})\s*" + _ANY_LAYOUT,
            re.IGNORECASE,
        ),
        # after a bare 打 (also "to inject"), only what no dose starts with: 0 or +
        re.compile(r"打\s*(?=[(（]?[+0])" + _ANY_LAYOUT),
    ],
    validate=_seven_to_fifteen_digits,
    group="v",
)

# A looser layout (groups of any size: 1 3 8 0 0 1 3 8 0 0 0) after a shorter cue list than
# ``_PHONE_CUE``: only words that name a phone outright may lead it. With 号码, 回电 or tel it
# would take 号码是 5 10 15 20 25 mg, 回电 2023-05-12 and Hotel 2 3 4 5 6 7 8 for numbers.
PHONE_BY_CONTEXT = RegexRecognizer(
    name="phone_by_context",
    # Case-blind, the engine cannot derive the first characters: the lookahead gives them.
    gate=re.compile(
        _PHONE_CUE_FIRST
        + r"(?:电话|手机|座机|联系方式|热线|来电|打|拨|致电|call|電話|手機|座機|聯|熱線|來電|手提)",
        re.IGNORECASE,
    ),
    type=EntityType.PHONE,
    patterns=[
        re.compile(
            r"(?:电话|手机|座机|联系方式|热线|来电|打给我|call"
            r"|電話|手機|座機|聯繫方式|聯絡方式|联络方式|熱線|來電|手提電話|手提电话|手提)"
            r"(?:号码|号|號碼|號)?\s*(?:[:：为為]|就是|是)?\s*"
            r"(?P<v>(?:\+?86[-\s]?)?0?\d[\d\s-]{5,14}\d)(?![\d.])",
            re.IGNORECASE,
        ),
        # A local number with no area code after a call verb (打6234 5678): only the 7-8
        # digit shape, so that doses after 打 (打 12 12 10 单位) stay.
        re.compile(r"(?:拨打|致电|打给|打到|拨|打)\s*(?P<v>\d{3,4}[-\s]?\d{4})(?![\d.])"),
    ],
    group="v",
)
