"""Government identity numbers: mainland resident IDs (checksum and birth date validated, so
bare digit strings are masked with no context and lab values stay), and numbers a platform
already starred in part.
"""

from __future__ import annotations

import re

from medrealmm.deid.checksum import is_resident_id
from medrealmm.deid.recognizer import RegexRecognizer
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
