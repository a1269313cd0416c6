"""Check characters of identity and card numbers: mainland resident IDs (GB 11643-1999: 18
digits with a check character, or the 15-digit pre-1999 form), Hong Kong identity cards,
Taiwan national IDs and card numbers (Luhn). Validating a check character (and a birth date)
is what lets a recognizer fire on a bare string without context and still keep lab values
and codes alone.
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


def luhn_ok(digits: str) -> bool:
    """The Luhn check of bank cards (and IMEIs): every second digit from the right doubled."""
    if not digits.isdigit() or len(digits) < 2:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def is_hong_kong_id(letters: str, digits: str, check: str) -> bool:
    """Hong Kong identity card A123456(3): one or two letters, six digits and a check
    character (0-9 or A) that makes the weighted sum (9 down to 1) divisible by 11; a single
    letter is read with a space (36) before it."""
    letters = letters.upper()
    if not (1 <= len(letters) <= 2 and letters.isalpha() and len(digits) == 6):
        return False
    values = ([36] if len(letters) == 1 else []) + [ord(c) - 55 for c in letters]
    values += [int(d) for d in digits]
    total = sum(v * w for v, w in zip(values, range(9, 1, -1), strict=True))
    expected = (11 - total % 11) % 11
    return check.upper() == ("A" if expected == 10 else str(expected))


# Taiwan: the letter stands for a two-digit number, not in alphabetical order.
_TAIWAN_LETTERS = dict(zip("ABCDEFGHJKLMNPQRSTUVXYWZIO", range(10, 36), strict=True))


def is_taiwan_id(value: str) -> bool:
    """Taiwan national ID A123456789: a letter, 1 or 2 (sex; 8 or 9 on newer residence
    certificates), eight digits; the weighted sum with the letter's number is divisible by 10."""
    value = value.upper()
    if len(value) != 10 or value[0] not in _TAIWAN_LETTERS or not value[1:].isdigit():
        return False
    if value[1] not in "1289":
        return False
    tens, ones = divmod(_TAIWAN_LETTERS[value[0]], 10)
    weighted = zip(value[1:9], range(8, 0, -1), strict=True)
    total = tens + ones * 9 + sum(int(d) * w for d, w in weighted)
    return (total + int(value[9])) % 10 == 0
