"""Mainland resident ID numbers (GB 11643-1999): 18 digits with a check character, or the
15-digit pre-1999 form. Validating the checksum and the birth date is what lets the ID
recognizer fire on bare digit strings without context and still keep lab values alone.
"""

from __future__ import annotations

from datetime import date

_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CHECK = "10X98765432"
_REGION_FIRST_DIGITS = frozenset("12345678")


def check_char(first17: str) -> str:
    total = sum(int(d) * w for d, w in zip(first17, _WEIGHTS, strict=True))
    return _CHECK[total % 11]


def _valid_date(year: int, month: int, day: int) -> bool:
    try:
        born = date(year, month, day)
    except ValueError:
        return False
    return date(1880, 1, 1) <= born <= date(2100, 1, 1)


def is_resident_id18(value: str) -> bool:
    value = value.upper()
    if len(value) != 18 or not value[:17].isdigit() or value[0] not in _REGION_FIRST_DIGITS:
        return False
    if not _valid_date(int(value[6:10]), int(value[10:12]), int(value[12:14])):
        return False
    return value[17] == check_char(value[:17])


def is_resident_id15(value: str) -> bool:
    """Old form: 6-digit region, YYMMDD (19xx), 3-digit sequence; it has no check digit."""
    if len(value) != 15 or not value.isdigit() or value[0] not in _REGION_FIRST_DIGITS:
        return False
    return _valid_date(1900 + int(value[6:8]), int(value[8:10]), int(value[10:12]))


def is_resident_id(value: str) -> bool:
    return is_resident_id18(value) or is_resident_id15(value)
