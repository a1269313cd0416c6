"""Record, order and insurance numbers: after a keyword that says what they number, after a
letter prefix, or any run too long to be a clinical value.
"""

from __future__ import annotations

import re

from medrealmm.deid.recognizer import RegexRecognizer, starts_with_one_of
from medrealmm.deid.spans import EntityType

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
