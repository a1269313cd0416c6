"""Vehicle plates of the mainland, Hong Kong, Macau and Taiwan (HIPAA's vehicle identifiers):
a plate names the car's owner.

A mainland plate is distinctive on its own (a province's one-character name, simplified or
traditional, then the city letter and five or six letters and digits, or a 学/警/港/澳
suffix). Plates of Hong Kong (AB 1234), Macau (MX-12-34) and Taiwan (ABC-1234, 1234-AB) are
letters and digits that codes and lab names also take, so they are masked after a plate word.
"""

from __future__ import annotations

import re

from medrealmm.deid.recognizer import RegexRecognizer, starts_with_one_of
from medrealmm.deid.spans import EntityType

# Provinces in simplified and traditional characters (沪/滬, 粤/粵 …), and the other short
# names people write for the plate's own (黔 for 贵, 滇 for 云, 蜀 for 川, 陇 for 甘, 秦 for 陕).
_PLATE_PROVINCES = (
    "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼滬雲遼魯蘇贛晉陝閩貴粵寧瓊"
    "黔滇蜀陇秦隴"
)
_MAINLAND = (
    rf"[{_PLATE_PROVINCES}][A-Za-z][·•\s\-]?"
    r"(?=[A-Za-z0-9]*\d)(?:[A-Za-z0-9]{5,6}|[A-Za-z0-9]{4}[学學警港澳挂掛领領使])"
)
LICENSE_PLATE = RegexRecognizer(
    name="license_plate",
    gate=re.compile(r"[A-Za-z][·•\s\-]?[A-Za-z0-9]{4}"),
    type=EntityType.ID,
    patterns=[re.compile(_MAINLAND + r"(?![A-Za-z0-9])")],
)

_PLATE_WORD = r"车牌|車牌|牌照|车号|車號|号牌|號牌|plate|Plate|PLATE"
PLATE_BY_LABEL = RegexRecognizer(
    name="plate_by_label",
    gate=re.compile(r"牌|车号|車號|plate", re.IGNORECASE),
    type=EntityType.ID,
    patterns=[
        re.compile(
            starts_with_one_of(_PLATE_WORD) + rf"(?:{_PLATE_WORD})"
            rf"(?:号码|號碼|号|號|No\.?)?\s*(?:是|为|為|:|：)?\s*"
            r"(?P<v>(?<![A-Za-z0-9])(?:" + _MAINLAND + r"|[A-Z]{2}\s?\d{1,4}"  # Hong Kong
            r"|M[A-Z]-?\d{2}-?\d{2}|[A-Z]{2}-\d{2}-\d{2}"  # Macau
            r"|[A-Z]{2,3}-\d{3,4}|\d{3,4}-[A-Z0-9]{2,3}"  # Taiwan
            r"|[A-Za-z]\d{4,5}|[A-Za-z0-9]{5,7})(?![A-Za-z0-9]))"
        )
    ],
    group="v",
)
