"""Recognizers for structurally regular identifiers: IDs, phones, emails, URLs, order and
record numbers, hospitals, sub-city addresses and full dates.

Each pattern is anchored so it cannot eat into a neighbouring number: clinical values (doses,
lab results, ages, durations) never have the shape of these identifiers, which is what keeps
them intact.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

from medrealmm.deid.checksum import is_resident_id
from medrealmm.deid.names import SURNAME_RE, WORDLIKE_SURNAMES
from medrealmm.deid.recognizer import RegexRecognizer, starts_with_one_of
from medrealmm.deid.spans import EntityType, Span, words

CJK = "\u4e00-\u9fff"
# Characters that end a proper noun when scanning left from a suffix such as 医院 or 区.
STOP = "在去到从于了的是与及或跟把被给向往来回我你他她们这那个也都就还又再说看住家过请问有没想"
# Institution names hold 家, 都, 回 … (张家港, 成都): only plain function words end them.
HOSPITAL_STOP = "在去到从于了的是与及或跟把被给向往我你他她们这那也就还又再说看请问有没想离住"
# Addresses also stop at 省 and 市: the city itself is kept, only sub-city units are masked.
ADDRESS_STOP = STOP + "省市"


def _cjk_proper(lo: int, hi: int, stop: str = STOP, not_in: str = "") -> str:
    guard = f"(?!{not_in})" if not_in else ""
    return f"(?:{guard}(?![{stop}])[{CJK}0-9]){{{lo},{hi}}}"


# -- resident ID ---------------------------------------------------------------------
def _valid_id(match: re.Match[str]) -> EntityType | None:
    digits = re.sub(r"\s", "", match.group(0))
    return EntityType.ID if is_resident_id(digits) else None


RESIDENT_ID = RegexRecognizer(
    name="resident_id",
    gate=re.compile(r"\d{15}|\d{6} \d{8}"),
    type=EntityType.ID,
    patterns=[
        re.compile(r"(?<![0-9A-Za-z])\d{17}[\dXx](?![0-9A-Za-z])"),
        re.compile(r"(?<![0-9A-Za-z])\d{6} \d{8} \d{3}[\dXx](?![0-9A-Za-z])"),
        re.compile(r"(?<![0-9A-Za-z])\d{15}(?![0-9A-Za-z])"),
    ],
    validate=_valid_id,
)

# -- phones --------------------------------------------------------------------------
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


def phone_digits(candidate: str) -> str | None:
    """The national number a candidate spells, or None where it is no phone: a mobile, a
    400/800 number or a landline libphonenumber holds valid."""
    country = _COUNTRY.match(candidate)
    rest = candidate[country.end() :] if country else candidate
    if country is None and _TRUNK.match(rest.lstrip()):
        # (0)10-8765 4321: the bracketed trunk 0 stands for the country code's absence
        return phone_digits("+86 " + rest.lstrip())
    rest = _TRUNK.sub("", rest)
    groups = re.findall(r"\d+", rest)
    # Groups of one or two digits are listed values (0.5 1.2 3.4, 150 230 180 20), except an
    # area code written the international way (+86 10 8765 4321).
    # Ten or more single digits are a number spelled out one by one (1 3 8 0 0 …), no list.
    shortest = min(map(len, groups[1:]), default=3)
    spelled = len(groups) >= 10 and max(map(len, groups)) == 1
    if len(groups) > 1 and not spelled and (shortest < 3 or len(groups[0]) < (2 if country else 3)):
        return None
    digits = "".join(groups)
    if country is None and re.match(r"(?:00)?86", digits) and len(digits) >= 12:
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
_PHONE_CUE = r"(?:电话|手机|座机|总机|联系方式|热线|来电|回电|回拨|号码|tel|phone|mobile|call)"
_CALL_VERB = r"(?:拨打|致电|打给我?|打到|拨|打这个号?码?|打我)"
# Every match starts with a cue's first character: checked first, it lets the scan pass
# other characters at once.
_PHONE_CUE_FIRST = r"(?=[电手座总联热来回号拨致打tTpPmMcC])"
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
    gate=re.compile(_PHONE_CUE + "|打|拨|致电", re.IGNORECASE),
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
    gate=re.compile(r"电话|手机|座机|联系方式|热线|来电|打|拨|致电|call", re.IGNORECASE),
    type=EntityType.PHONE,
    patterns=[
        re.compile(
            r"(?:电话|手机|座机|联系方式|热线|来电|打给我|call)(?:号码|号)?\s*(?:[:：为]|就是|是)?\s*"
            r"(?P<v>(?:\+?86[-\s]?)?0?\d[\d\s-]{5,14}\d)(?![\d.])",
            re.IGNORECASE,
        ),
        # A local number with no area code after a call verb (打6234 5678): only the 7-8
        # digit shape, so that doses after 打 (打 12 12 10 单位) stay.
        re.compile(r"(?:拨打|致电|打给|打到|拨|打)\s*(?P<v>\d{3,4}[-\s]?\d{4})(?![\d.])"),
    ],
    group="v",
)

# -- email and URL -------------------------------------------------------------------
EMAIL = RegexRecognizer(
    name="email",
    gate=re.compile("@"),
    type=EntityType.EMAIL,
    patterns=[
        re.compile(
            r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
        )
    ],
)
_URL_TAIL = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'*+,;=%]*[A-Za-z0-9\-_~/#=&%]"
URL = RegexRecognizer(
    name="url",
    gate=re.compile(r"\.[A-Za-z]|www", re.IGNORECASE),
    type=EntityType.URL,
    patterns=[
        re.compile(rf"(?:https?://|www\.){_URL_TAIL}", re.IGNORECASE),
        re.compile(
            r"(?<![\w@.\-])(?:[A-Za-z0-9-]+\.)+(?:com|cn|net|org|cc|io|top|vip|info)"
            rf"(?:/{_URL_TAIL})?(?![\w@])",
            re.IGNORECASE,
        ),
    ],
)

# -- chat accounts and vehicle plates ------------------------------------------------
# An account named after its app (微信号：wx_liuyang88, 加我QQ 123456789): a WeChat ID is a
# letter then 5-19 letters, digits, _ or -; a QQ number is 5-11 digits. Both reach a person.
_ACCOUNT_APPS = "微信|威信|薇信|VX|WX|V信|weixin|wechat|QQ|扣扣|抖音|快手|微博|钉钉|小红书"
ACCOUNT_BY_APP = RegexRecognizer(
    name="account_by_app",
    gate=re.compile(r"[A-Za-z0-9]{5}"),
    type=EntityType.ID,
    patterns=[
        re.compile(
            starts_with_one_of(_ACCOUNT_APPS.lower(), _ACCOUNT_APPS.upper())
            + f"(?:{_ACCOUNT_APPS})"
            r"(?:号码|号|账号|帐号|ID|id)?\s*(?:是|为|:|：)?\s*"
            r"(?P<v>(?<![A-Za-z0-9_])(?:[A-Za-z][A-Za-z0-9_-]{5,19}|[1-9]\d{4,10}))"
            r"(?![A-Za-z0-9_-])",
            re.IGNORECASE,
        )
    ],
    group="v",
    validate=lambda m: None if phone_digits(m.group("v")) else EntityType.ID,  # a phone's own
)
# A vehicle plate (京A12345, 粤B·D12345): a province's one-character name, the city letter,
# then five or six letters and digits. It names the car's owner.
_PLATE_PROVINCES = "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼"
LICENSE_PLATE = RegexRecognizer(
    name="license_plate",
    gate=re.compile(r"[A-Z][·•\s]?[A-Z0-9]{4}"),
    type=EntityType.ID,
    patterns=[
        re.compile(
            rf"[{_PLATE_PROVINCES}][A-Z][·•\s]?"
            r"(?=[A-Z0-9]*\d)[A-Z0-9]{5,6}(?![A-Za-z0-9])"
        )
    ],
)

# -- order, record and insurance numbers ----------------------------------------------
_KEYWORD_TYPES: tuple[tuple[str, EntityType], ...] = (
    ("订单|交易|流水|支付|快递|物流|运单|退款单|处方单", EntityType.ORDER_ID),
    (
        "病历|病案|住院|门诊|就诊卡|就诊|档案|检验单|报告单|条码|登记|医保卡|医保|社保卡|社保|"
        "保险|保单|患者ID|病人ID",
        EntityType.MRN,
    ),
    ("身份证|证件", EntityType.ID),
)
_KEYWORD_RE = re.compile(
    starts_with_one_of(*(k for k, _ in _KEYWORD_TYPES))
    + "(?P<k>"
    + "|".join(k for k, _ in _KEYWORD_TYPES)
    + ")"
    r"(?:号码|编号|卡号|单号|号|码|ID)?\s*(?:是|为|:|：)?\s*"
    r"(?P<v>(?=[A-Za-z0-9-]*\d)[A-Za-z0-9][A-Za-z0-9-]{4,31})(?![A-Za-z0-9])",
    re.IGNORECASE,
)


def _keyword_type(match: re.Match[str]) -> EntityType | None:
    keyword = match.group("k").upper()
    for alternatives, kind in _KEYWORD_TYPES:
        if keyword in alternatives.upper().split("|"):
            return kind
    return None


NUMBER_BY_KEYWORD = RegexRecognizer(
    name="number_by_keyword",
    gate=re.compile(r"\d{2}"),
    type=EntityType.MRN,
    patterns=[_KEYWORD_RE],
    validate=_keyword_type,
    group="v",
)

_PREFIX_TYPES = {
    "MR": EntityType.MRN,
    "ZY": EntityType.MRN,
    "MZ": EntityType.MRN,
    "BA": EntityType.MRN,
    "YB": EntityType.MRN,
    "SB": EntityType.MRN,
}


def _prefixed_type(match: re.Match[str]) -> EntityType | None:
    return _PREFIX_TYPES.get(match.group("p").upper(), EntityType.ORDER_ID)


PREFIXED_NUMBER = RegexRecognizer(
    name="prefixed_number",
    gate=re.compile(r"[A-Z]-?\d{8}"),
    type=EntityType.ORDER_ID,
    patterns=[
        re.compile(r"(?<![A-Za-z0-9])(?P<p>[A-Z]{1,4})-?\d{8,24}(?![A-Za-z0-9])"),
    ],
    validate=_prefixed_type,
)
LONG_NUMBER = RegexRecognizer(
    name="long_number",
    gate=re.compile(r"\d{12}"),
    type=EntityType.ORDER_ID,
    # No clinical value has 12+ digits; an unexplained one is some account or order number.
    patterns=[re.compile(r"(?<![0-9A-Za-z.])\d{12,30}(?![0-9A-Za-z.])")],
)


def _starred_type(match: re.Match[str]) -> EntityType:
    return EntityType.PHONE if len(match.group()) == 11 else EntityType.ID


# Numbers a platform already starred in part (138****8000, 110101********123X): the digits
# left still narrow down whose number it is, so the whole is masked.
STARRED_NUMBER = RegexRecognizer(
    name="starred_number",
    gate=re.compile(r"[*＊]{3}"),
    type=EntityType.PHONE,
    patterns=[
        re.compile(r"(?<![0-9A-Za-z*＊])1[3-9]\d[*＊]{4}\d{4}(?![0-9A-Za-z*＊])"),
        re.compile(r"(?<![0-9A-Za-z*＊])\d{3,6}[*＊]{6,12}\d{3}[\dXx](?![0-9A-Za-z*＊])"),
    ],
    validate=_starred_type,
)

# -- full dates ----------------------------------------------------------------------
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

# -- hospitals and clinics -----------------------------------------------------------
_HOSPITAL_SUFFIX = (
    "医院|诊所|卫生院|门诊部|口腔门诊部?|保健院|保健所|医务室|卫生室|卫生所|齿科|卫生服务站|服务站|"
    "(?:卫生服务|医疗|体检|医学|康复|急救|诊疗|健康管理|透析|影像|妇幼保健)中心"
)
_HOSPITAL_RE = re.compile(
    # A Latin brand may lead a private clinic's name (ABC口腔诊所).
    rf"(?P<name>(?:[A-Za-z]{{2,8}})?{_cjk_proper(1, 18, HOSPITAL_STOP, not_in=_HOSPITAL_SUFFIX)})"
    rf"(?P<suffix>{_HOSPITAL_SUFFIX})(?:[{CJK}]{{0,4}}?(?:分院|院区))?"
)
_GENERIC_ORG_WORDS = sorted(
    words(
        "之前 以前 上次 那个 这个 "
        "当地 附近 大 小 正规 三甲 二甲 三级 二级 一级 综合 专科 私立 公立 民营 上级 下级 本地 "
        "这家 那家 哪家 别的 其他 其它 基层 社区 乡镇 县级 市级 省级 县 市 省 儿童 妇幼 中医 "
        "中西医结合 "
        "口腔 眼科 皮肤科 皮肤病 精神病 精神 肿瘤 传染病 专业 大型 小型 网上 互联网 线下 线上 就近 "
        "全国 国内 国外 外地 老家 好 一家 几家 两家 各大 各 定点 指定 家附近 单位 学校 动物 宠物 "
        "整形 美容 医疗 男科 妇科 产科 儿科 牙科 心血管 骨科 结核病 人民 第 新"
    ),
    key=len,
    reverse=True,
)
_GENERIC_ORG_RE = re.compile("|".join(_GENERIC_ORG_WORDS))


_PLACE_TAGS = frozenset({"ns", "nt", "nz", "j"})


def _starts_with_place(name: str) -> bool:
    """A place word heads the name (大冶…, 华西…): stripping generic characters such as 大 out
    of it must not turn it into a generic mention."""
    from medrealmm.deid.names import word_tag  # jieba's dictionary, loaded on first use

    return any(
        name[:n] not in _GENERIC_ORG_WORDS and word_tag(name[:n]) in _PLACE_TAGS
        for n in (2, 3)
        if len(name) >= n
    )


# One character and 县 or 市 name a county or city (沛县, 萧县, 津市), whether or not the
# dictionary knows it; 本县, 该市, 邻县 are mentions of the speaker's own or another one.
_ONE_CHARACTER_PLACE = re.compile(
    rf"(?![本我该这那邻外全各同此某上下几哪每其县市区一二三四五六七八九十两])[{CJK}][县市]"
    rf"(?![{CJK}]?[县市区])"
)
_OWNER_RE = re.compile(rf"{SURNAME_RE}[氏记]?")
_CLINIC_SUFFIXES = frozenset(words("诊所 门诊部 口腔门诊 口腔门诊部 齿科"))


def named_institution(name: str, suffix: str = "") -> bool:
    """Whether ``name`` (what precedes the institution word ``suffix``) names one institution,
    not a generic mention such as 当地医院 or 三甲医院. Shared by the rules and the NER."""
    rest = _GENERIC_ORG_RE.sub("", name)
    owner = _OWNER_RE.fullmatch(rest)
    if owner and suffix in _CLINIC_SUFFIXES and (rest[0] not in WORDLIKE_SURNAMES or "氏" in rest):
        return True  # 李氏口腔门诊, 孟口腔诊所, 竺齿科, 向氏诊所: a clinic named by its owner
    if _ONE_CHARACTER_PLACE.match(name) and not _common_word(name[:2]):
        return True  # 沛县人民医院, 津市中医院: a county or city of one character
    if re.search(r"第[一二三四五六七八九十\d]+", name):
        return True
    return len(rest) >= 2 or _starts_with_place(name)


def split_institution(text: str) -> tuple[str, str]:
    """``text`` without its institution words, and the last of them (县人民医院 -> 县人民, 医院)."""
    suffixes = list(_SUFFIX_RE.finditer(text))
    return _SUFFIX_RE.sub("", text), suffixes[-1].group() if suffixes else ""


_SUFFIX_RE = re.compile(_HOSPITAL_SUFFIX)


def _proper_hospital(match: re.Match[str]) -> EntityType | None:
    named = named_institution(match.group("name"), match.group("suffix"))
    return EntityType.HOSPITAL if named else None


HOSPITAL = RegexRecognizer(
    name="hospital",
    type=EntityType.HOSPITAL,
    patterns=[_HOSPITAL_RE],
    validate=_proper_hospital,
    anchor=re.compile(_HOSPITAL_SUFFIX),
    reach=(20, 8),
)

# Colloquial short names (石桥人医, 东莞一院, 通辽妇幼, 福州中医, 岳县中医): a place of 2-3
# characters or a county, city or district name, and a short institution word, after a
# going-to cue or at the start of a document line, and before what people do there; 看中医,
# 去妇幼 or 去县中医 alone has no place in front. A department after it counts as what people
# do there (中山一院皮肤科).
_SHORT_SUFFIX = "人医|一院|二院|三院|四院|五院|附一|附二|附院|妇幼|中医"
HOSPITAL_SHORT = RegexRecognizer(
    name="hospital_short",
    gate=re.compile(_SHORT_SUFFIX),
    type=EntityType.HOSPITAL,
    patterns=[
        re.compile(
            rf"(?:(?<=[在去到于离转])|(?<=住进)|^|(?<=[\s:：]))"
            rf"(?:{_cjk_proper(1, 3, HOSPITAL_STOP + '看找请县市区镇省')}[县市区]"
            rf"|{_cjk_proper(2, 3, HOSPITAL_STOP + '看找请县市区镇省')})(?:{_SHORT_SUFFIX})"
            r"(?=看|住院|就诊|检查|复查|做|开|挂|的|拍|查|比较|很近|门诊|检验|收费|报告|医学|处方"
            # …or one of its departments (中山一院皮肤科, 东莞一院心内科)
            rf"|(?:(?![{HOSPITAL_STOP}])[{CJK}]){{1,3}}科(?![学技普])"
            r")"
        )
    ],
)

# Hospitals known across the country by a short name (在瑞金做的胃镜, 去协和看, 到301复查): after
# a going-to cue and before what people do there, since 瑞金 alone is a city and 同济 a
# university.
FAMOUS_HOSPITAL_NAMES = words(
    "协和 华西 湘雅 瑞金 华山 齐鲁 同济 中山一院 北医三院 北大人民 301 浙一 浙二 湘雅二院 华西二院"
)
FAMOUS_HOSPITAL = RegexRecognizer(
    name="famous_hospital",
    gate=re.compile("|".join(FAMOUS_HOSPITAL_NAMES)),
    type=EntityType.HOSPITAL,
    patterns=[
        re.compile(
            rf"(?<=[在去到于])(?:{'|'.join(sorted(FAMOUS_HOSPITAL_NAMES, key=len, reverse=True))})"
            r"(?=看|就诊|住院|检查|复查|做|开|挂|的)"
        )
    ],
)


# -- sub-city geography ----------------------------------------------------------------
def _common_word(word: str) -> bool:
    from medrealmm.deid.names import is_common_word  # jieba's dictionary, loaded on first use

    return is_common_word(word)


_BODY_CHARS = "腔腹胸心肝肺肾脑颈腰骶臀股腿臂肩背部膜眼耳鼻口咽喉皮骨前后左右上下内外中"
NOT_DISTRICTS = frozenset(
    words(
        "病区 市区 郊区 城区 山区 景区 校区 社区 园区 厂区 小区 误区 禁区 疫区 牧区 地区 专区 "
        "分区 片区 辖区 新区 老区 灾区 盲区 雷区 重灾区 高发区 风险区 流行区 县城 城镇 "
        "家乡 老乡 城乡 农村 乡村 新农村 山村 渔村 村村"
    )
)
# The city is kept when named alone (去了上海), but masked as the head of a full address
# (南宁市徐汇县…): there it narrows the address, and the rest is masked anyway.
_CITY = rf"(?P<city>(?:{_cjk_proper(2, 3, ADDRESS_STOP)}省)?{_cjk_proper(2, 4, ADDRESS_STOP)}市)"
_DISTRICT = rf"(?P<district>{_cjk_proper(2, 4, ADDRESS_STOP)}(?:区|县|旗))"
# A town's name may be one character right after its county (…县阳镇), never on its own.
_STREET = (
    rf"(?P<street>(?:{_cjk_proper(2, 6, ADDRESS_STOP)}|(?<=[县区旗])(?![{ADDRESS_STOP}])[{CJK}])"
    r"(?:街道|镇|乡))"
)
# Rural addresses: a village (…村, …屯) and its group (三组, 5队); the village name may hold 家
# (兰家村), so only function words and higher units end it.
_VILLAGE = rf"(?P<village>{_cjk_proper(1, 5, HOSPITAL_STOP + '省市县区镇乡')}(?:村|屯|嘎查))"
_GROUP = r"(?P<group>[一二三四五六七八九十\d]{1,3}\s*(?:组|队|社))"
_ROAD = rf"(?P<road>{_cjk_proper(1, 6, ADDRESS_STOP)}(?:大道|路|街|巷|胡同|弄))"
_NUMBER = r"(?P<number>\d{1,5}\s*(?:号院|号|弄))"
_COMPOUND = (
    rf"(?P<compound>(?:(?![{ADDRESS_STOP}])[{CJK}0-9A-Za-z]){{2,10}}"
    r"(?:小区|花园|家园|公寓|大厦|新村|苑|社区))"
)
# An office or residential building after a road or house number (…478号华星时代广场, …大道保利
# 国际中心): on its own such a name (体检中心) is no address, so it only extends one.
_BUILDING = (
    rf"(?P<building>(?:(?![{ADDRESS_STOP}])[{CJK}0-9A-Za-z]){{2,10}}?"
    r"(?:广场|中心|大楼|大厦|商厦|写字楼|公馆|家属院|宿舍楼?|家属楼|华庭|华府|名苑|雅苑|花苑))"
)
# Building, entrance, floor and room (3号楼2单元501, A座1203, 5-2-301): the room number may
# stand bare after a unit word.
_UNIT_BODY = (
    r"(?:[A-Za-z\d]{1,4}\s*(?:栋|幢|号楼|座|单元|楼|层|室|号)\s*)+"
    r"(?:[-—]?\d{2,4}(?:室|房|号)?(?![\d.]))?"
)
_UNIT = rf"(?P<unit>{_UNIT_BODY})"
# Where the full pattern matches only the empty string (most positions: a window spans 40
# characters around one anchor), it is costly to find that out. A non-empty match starts
# with up to five digits, numerals or letters and a group, number or unit word (三组, 12号,
# A座), or with one to ten name characters and then a unit word (…市, …区, …路, …小区); this
# lookahead checks just that first, with the stop characters every part shares, so it skips
# no non-empty match.
_SHARED_STOP = "".join(sorted(set(ADDRESS_STOP) & set(HOSPITAL_STOP + "省市县区镇乡")))
_ADDRESS_START = (
    r"(?=[\dA-Za-z一二三四五六七八九十]{1,5}\s*[组队社号弄栋幢座单楼层室]"
    rf"|(?:(?![{_SHARED_STOP}])[{CJK}0-9A-Za-z]){{1,10}}?"
    r"(?:[省市区县旗街镇乡村屯嘎路巷胡弄苑]|大道|大厦|小区|花园|家园|公寓|新村|社区))"
)
_ADDRESS_RE = re.compile(
    _ADDRESS_START + rf"(?:{_CITY}(?=[{CJK}]{{2,}}(?:区|县|旗|镇|乡|村|路|街)))?"
    rf"(?:{_DISTRICT})?(?:{_STREET})?(?:{_VILLAGE})?(?:{_GROUP})?(?:{_ROAD})?(?:{_NUMBER})?"
    rf"(?:{_COMPOUND}|(?<=[号路街道巷弄])(?:{_BUILDING}))?(?:{_UNIT})?"
)
_ADDRESS_CUE = re.compile(r"(?:住在|住|家在|位于|地址|在|搬到|来自)[:：\s]*$")


_NOT_ALONE = ({"building", "unit"}, {"number"}, {"group"})


def _valid_address(match: re.Match[str]) -> EntityType | None:
    parts = {k: v for k, v in match.groupdict().items() if v}
    if parts.keys() == {"city"}:
        return None
    parts.pop("city", None)
    # A unit, a house number or a group alone is no address, nor a building with at most a
    # unit (体检中心3楼).
    if not parts or any(set(parts) <= alone for alone in _NOT_ALONE):
        return None
    if set(parts) == {"village"} and (
        parts["village"] in NOT_DISTRICTS or _common_word(parts["village"])
    ):
        return None
    district = parts.get("district")
    generic = district and (
        district in NOT_DISTRICTS or any(c in _BODY_CHARS for c in district[:-1])
    )
    if generic and len(parts) == 1:
        return None
    street = parts.get("street")
    if street and street in NOT_DISTRICTS and len(parts) == 1:
        return None
    if set(parts) == {"road"}:
        # A bare 'xx路' is too often a word (思路, 走路); need a cue before it.
        before = match.string[max(0, match.start() - 4) : match.start()]
        return EntityType.ADDRESS if _ADDRESS_CUE.search(before) else None
    if set(parts) == {"compound"} and parts["compound"].endswith("社区"):
        return None
    return EntityType.ADDRESS


ADDRESS = RegexRecognizer(
    name="address",
    type=EntityType.ADDRESS,
    patterns=[_ADDRESS_RE],
    validate=_valid_address,
    # 号 after 证/历/单/卡 is a record number's label, not a house number.
    anchor=re.compile(
        "[区县旗镇乡路街巷弄苑村屯组]|(?<![证历单卡码账编型])号|胡同|小区|花园|家园|公寓|大厦|新村"
    ),
    reach=(16, 24),
)

# A place and a house number with no road or unit word between (西塘桥南318号, 江湾1024号):
# the house number makes it an address. Three or more digits (a day of the month is 3号),
# and no label character in the name (挂号单, 工号, 床, 第): those number other things.
_LABEL_CHARS = frozenset("号码票证卡编第期次床房室科窗台班级届周月日天年")
# A dictionary word before the number is a place only if it ends like one (江堤, 河湾), not
# like a role or a thing (会员, 套餐).
_PLACE_END = frozenset("堤桥湾营村庄屯坝口港岗坡沟河湖山岭园场塘门里头东南西北街道寨铺集墩滩洲")


def _valid_house_number(match: re.Match[str]) -> EntityType | None:
    place = match.group("place")
    if any(c in _LABEL_CHARS for c in place):
        return None
    if _common_word(place) and place[-1] not in _PLACE_END:
        return None
    return EntityType.ADDRESS


ADDRESS_HOUSE_NUMBER = RegexRecognizer(
    name="address_house_number",
    gate=re.compile(r"\d{3}号"),
    type=EntityType.ADDRESS,
    patterns=[
        re.compile(
            rf"(?P<place>{_cjk_proper(2, 6, HOSPITAL_STOP)})[1-9]\d{{2,4}}\s*号(?![码床])"
            rf"(?:院|楼)?"
        )
    ],
    validate=_valid_house_number,
)

# An address given after a cue, in whatever form (建国门内51号, 西塞456号): the cue and the
# house number bound it.
ADDRESS_BY_CUE = RegexRecognizer(
    name="address_by_cue",
    gate=re.compile(r"\d号"),
    type=EntityType.ADDRESS,
    patterns=[
        re.compile(
            r"(?:家在|住在|家住|住址|地址|寄到|寄至|寄往|搬到|收货地址)[:：\s]*"
            rf"(?P<v>{_cjk_proper(2, 16, HOSPITAL_STOP)}\d{{1,5}}\s*号(?:院|楼)?"
            rf"(?:{_UNIT_BODY})?)"
        )
    ],
    group="v",
)
