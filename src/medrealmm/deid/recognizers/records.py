"""Record, order and insurance numbers: after a keyword that says what they number (in either
script), after a letter prefix, or any run too long to be a clinical value; licence and
certificate numbers (执业证书, 驾驶证 …) and fax numbers after their label. Product codes
(国药准字…, 型号…, 批号…) have the same shapes and stay (``product_codes``).
"""

from __future__ import annotations

import re

from medrealmm.deid.recognizer import RegexRecognizer, starts_with_one_of
from medrealmm.deid.recognizers.phones import phone_digits
from medrealmm.deid.recognizers.product_codes import product_code_at
from medrealmm.deid.spans import EntityType

_KEYWORD_TYPES: tuple[tuple[str, EntityType], ...] = (
    (
        "订单|交易|流水|支付|快递|物流|运单|退款单|处方单|訂單|快遞|運單|退款單|處方單",
        EntityType.ORDER_ID,
    ),
    (
        "病历|病案|住院|门诊|就诊卡|就诊|档案|检验单|报告单|条码|登记|医保卡|医保|社保卡|社保|"
        "保险|保单|患者ID|病人ID|ID号|新农合|农合|影像|检查|檢查|"
        "病歷|門診|就診卡|就診|檔案|檢驗單|報告單|條碼|登記|醫保卡|醫保|保險|保單",
        EntityType.MRN,
    ),
    ("身份证|证件|身份證|身分證|身分证|證件", EntityType.ID),
)
_KEYWORD_RE = re.compile(
    starts_with_one_of(*(k for k, _ in _KEYWORD_TYPES))
    + "(?P<k>"
    + "|".join(k for k, _ in _KEYWORD_TYPES)
    + ")"
    r"(?:号码|编号|卡号|单号|号|码|號碼|編號|卡號|單號|號|碼|ID)?\s*(?:是|为|為|:|：)?\s*"
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
    # imaging and test accession numbers
    "CT": EntityType.MRN,
    "MRI": EntityType.MRN,
    "DR": EntityType.MRN,
    "US": EntityType.MRN,
    "PET": EntityType.MRN,
}


def _prefixed_type(match: re.Match[str]) -> EntityType | None:
    if product_code_at(match.string, match.start()):
        return None
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


def _unexplained_number(match: re.Match[str]) -> EntityType | None:
    """Not a product code, and not a phone (057166747685): the phone recognizers type those."""
    if product_code_at(match.string, match.start()) or phone_digits(match.group()):
        return None
    return EntityType.ORDER_ID


LONG_NUMBER = RegexRecognizer(
    name="long_number",
    gate=re.compile(r"\d{12}"),
    type=EntityType.ORDER_ID,
    # No clinical value has 12+ digits; an unexplained one is some account or order number.
    patterns=[re.compile(r"(?<![0-9A-Za-z.])\d{12,30}(?![0-9A-Za-z.])")],
    validate=_unexplained_number,
)

# Licences and certificates after their name (医师执业证书编号 110420000012345, 驾驶证号 …,
# 營業執照 …): the name says the code identifies its holder, whatever its shape.
_LICENCE = (
    r"执业证书|執業證書|执业证|執業證|资格证书|資格證書|资格证|資格證|医师资格|醫師資格|"
    r"执业许可证|執業許可證|许可证|許可證|营业执照|營業執照|驾驶证|駕駛證|驾照|駕照|行驶证|行駛證|"
    r"职业证|職業證|工作证|工作證|学生证|學生證|证书|證書|执照|執照|工号|工號|学号|學號|"
    r"统一社会信用代码|統一社會信用代碼|信用代码|信用代碼"
)
LICENCE_NUMBER = RegexRecognizer(
    name="licence_number",
    gate=re.compile(r"证|證|照|工号|工號|学号|學號|资格|資格|代码|代碼"),
    type=EntityType.ID,
    patterns=[
        re.compile(
            starts_with_one_of(_LICENCE) + rf"(?:{_LICENCE})"
            rf"(?:注册号|註冊號|编号|編號|号码|號碼|号|號|No\.?)?\s*(?:是|为|為|:|：)?\s*"
            r"(?P<v>(?<![0-9A-Za-z])(?=[0-9A-Za-z\- ]*\d{4})[0-9A-Za-z]"
            r"(?:[0-9A-Za-z\-]| (?=\d{3})){4,36})"
            r"(?![0-9A-Za-z])"
        )
    ],
    group="v",
)

# Fax numbers after their label, in any layout a phone takes (传真：0571-8765 4321, 傳真 2345 6789).
FAX_NUMBER = RegexRecognizer(
    name="fax_number",
    gate=re.compile(r"传真|傳真|fax", re.IGNORECASE),
    type=EntityType.PHONE,
    patterns=[
        re.compile(
            r"(?:传真|傳真|fax)(?:号码|號碼|号|號)?\s*(?:是|为|為|:|：|\.)?\s*"
            r"(?P<v>[(（]?(?:\+|00)?\d{1,4}[)）]?(?:[\s\-.]?[(（]?\d{2,8}[)）]?){1,4})(?![\d])",
            re.IGNORECASE,
        )
    ],
    validate=lambda m: EntityType.PHONE if sum(c.isdigit() for c in m.group("v")) >= 7 else None,
    group="v",
)
