"""Government identity numbers of every region a Chinese-language platform serves: mainland
resident IDs (checksum and birth date validated, so bare digit strings are masked with no
context and lab values stay), Hong Kong identity cards (check character), Taiwan national IDs
(checksum), Macau identity cards; passports and travel permits (港澳通行证, 回乡证, 台胞证) by
their shape or after their label; numbers a platform already starred in part.
"""

from __future__ import annotations

import re

from medrealmm.deid.checksum import is_hong_kong_id, is_resident_id, is_taiwan_id
from medrealmm.deid.recognizer import RegexRecognizer, starts_with_one_of
from medrealmm.deid.recognizers.product_codes import product_code_at
from medrealmm.deid.spans import EntityType


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


def _valid_regional_id(match: re.Match[str]) -> EntityType | None:
    if match.group("hk"):
        ok = is_hong_kong_id(match.group("hk"), match.group("hkd"), match.group("hkc"))
    elif match.group("tw"):
        ok = is_taiwan_id(match.group("tw"))
    else:
        ok = True  # Macau publishes no check rule: its bracketed shape is what is checked
    return EntityType.ID if ok else None


# Identity cards of Hong Kong (A123456(3), with its check character in brackets), Taiwan
# (A123456789) and Macau (1234567(8)), traditional or full-width brackets alike.
REGIONAL_ID = RegexRecognizer(
    name="regional_id",
    gate=re.compile(r"[A-Z]\d{6}|\d{7}\s?[(（]|[A-Z][1289]\d{8}"),
    type=EntityType.ID,
    patterns=[
        re.compile(
            r"(?<![0-9A-Za-z])(?:(?P<hk>[A-Z]{1,2})(?P<hkd>\d{6})\s?[(（](?P<hkc>[0-9A])[)）]"
            r"|(?P<tw>[A-Z][1289]\d{8})(?![0-9A-Za-z])"
            r"|(?P<mo>[157]\d{6}\s?[(（]\d[)）]))"
        )
    ],
    validate=_valid_regional_id,
)


def _not_a_product_code(match: re.Match[str]) -> EntityType | None:
    return None if product_code_at(match.string, match.start()) else EntityType.ID


# Passports and permits by their shape: mainland passports (E12345678, EA1234567, G12345678),
# exit-entry permits for Hong Kong and Macau (C12345678, CA1234567), home-return permits
# (H12345678, M1234567801), Hong Kong passports (K12345678): one letter and eight digits or two
# letters and seven. The record-number recognizer would type the first kind as an order.
PASSPORT_SHAPE = RegexRecognizer(
    name="passport_shape",
    gate=re.compile(r"[A-Z]{1,2}\d{7}"),
    type=EntityType.ID,
    patterns=[
        re.compile(
            r"(?<![0-9A-Za-z\-])(?:[EGCDSPK][A-Z]\d{7}|[EGCDSPKHMW]\d{8}|[HM]\d{10})"
            r"(?![0-9A-Za-z\-])"
        )
    ],
    validate=_not_a_product_code,
)

# Any identity document after its label, in simplified or traditional characters: the label
# says what the code is, whatever its shape (护照号码：G12345678, 台胞证 12345678, 回鄉證
# H1234567801, 香港身份證 A123456(3), 居留证 …).
_DOCUMENT_LABEL = (
    r"往来港澳通行证|往來港澳通行證|港澳通行证|港澳通行證|往来台湾通行证|往來台灣通行證|通行证|通行證|"
    r"台湾居民来往大陆通行证|台胞证|台胞證|回乡证|回鄉證|回乡卡|港澳居民来往内地通行证|"
    r"护照|護照|passport|Passport|PASSPORT|旅行证|旅行證|签证|簽證|居留证|居留證|居留许可|"
    r"居住证|居住證|身份证|身份證|身分證|身分证|香港身份证|澳门身份证|澳門身份證|證件|证件|"
    r"军官证|軍官證|士兵证|警官证|警官證|外国人永久居留身份证|永居证|绿卡"
)
DOCUMENT_BY_LABEL = RegexRecognizer(
    name="document_by_label",
    gate=re.compile(r"证|證|照|卡|port|PORT"),
    type=EntityType.ID,
    patterns=[
        re.compile(
            starts_with_one_of(_DOCUMENT_LABEL) + rf"(?:{_DOCUMENT_LABEL})"
            rf"(?:号码|號碼|编号|編號|字号|字號|号|號|No\.?|number)?\s*"
            r"(?:是|为|為|:|：)?\s*"
            r"(?P<v>(?<![0-9A-Za-z])[A-Za-z]{0,3}\d(?:[0-9A-Za-z]| (?=\d{3})){5,21}"
            r"(?:\s?[(（][0-9A-Za-z][)）])?)"
            r"(?![0-9A-Za-z])"
        )
    ],
    group="v",
)
