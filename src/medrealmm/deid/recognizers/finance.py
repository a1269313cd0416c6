"""Bank and social-insurance card numbers, in any grouping (6222 0212 3456 7890, 6217-0000-…,
6 and 13 digits): an account number names its holder (HIPAA's account numbers).

A card number with no label must pass the Luhn check that bank cards carry; after a label
that names a card (银行卡, 卡号, 社保卡, 新农合…) any grouping of 8 or more digits is taken.
Bank cards are typed [ID]; medical and social-insurance cards [MRN], as the record-number
recognizer types them after the same words.
"""

from __future__ import annotations

import re

from medrealmm.deid.checksum import luhn_ok
from medrealmm.deid.recognizer import RegexRecognizer, starts_with_one_of
from medrealmm.deid.spans import EntityType

# Four to six digits, then groups of three or more joined by one space or dash: 15-19 digits.
_GROUPED = r"\d{4,6}(?:[ \-]\d{3,13}){1,4}"


def _luhn_card(match: re.Match[str]) -> EntityType | None:
    """A card's digits pass Luhn, or come in the fours a card is printed in (6222 6001 2345
    6789): no clinical value is written so."""
    groups = re.findall(r"\d+", match.group())
    digits = "".join(groups)
    in_fours = len(groups) >= 4 and all(len(g) == 4 for g in groups[:-1])
    return EntityType.ID if 15 <= len(digits) <= 19 and (luhn_ok(digits) or in_fours) else None


BANK_CARD = RegexRecognizer(
    name="bank_card",
    gate=re.compile(r"\d{4}[ \-]\d{3}"),
    type=EntityType.ID,
    patterns=[re.compile(rf"(?<![\d.\-])(?:{_GROUPED})(?![\d.]|-\d)")],
    validate=_luhn_card,
)

_INSURANCE_CARDS = (
    r"社保卡|社會保障卡|社会保障卡|社保|醫保卡|医保卡|医保|醫保|新农合|新農合|农合|農合|"
    r"公积金|公積金|养老保险|養老保險"
)
_BANK_CARDS = (
    r"银行卡|銀行卡|储蓄卡|儲蓄卡|信用卡|借记卡|借記卡|银联卡|銀聯卡|工资卡|工資卡|"
    r"银行账号|銀行帳號|银行帐号|银行账户|銀行賬戶|收款账号|收款帳號|收款帐号|对公账户|账户|帳戶|賬戶|帐户|"
    # a bare 卡号, unless a medical card's (就诊卡号, 医保卡号: the record recognizer's)
    r"(?<![诊診保险險合疗療])卡[号號]"
)
_CARD_BY_LABEL = re.compile(
    starts_with_one_of(_INSURANCE_CARDS, _BANK_CARDS.replace("(?<![诊診保险險合疗療])", ""))
    + rf"(?P<k>{_INSURANCE_CARDS}|{_BANK_CARDS})"
    r"(?:号码|號碼|卡号|卡號|账号|帳號|帐号|编号|編號|号|號|尾号)?\s*(?:是|为|為|:|：)?\s*"
    r"(?P<v>[A-Za-z]?\d(?:[ \-]?\d){7,22})(?![\d])"
)


def _card_type(match: re.Match[str]) -> EntityType:
    return EntityType.MRN if re.fullmatch(_INSURANCE_CARDS, match.group("k")) else EntityType.ID


CARD_BY_LABEL = RegexRecognizer(
    name="card_by_label",
    gate=re.compile(r"卡|保|合|金|账|帳"),
    type=EntityType.ID,
    patterns=[_CARD_BY_LABEL],
    validate=_card_type,
    group="v",
)
