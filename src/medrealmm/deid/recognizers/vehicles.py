"""Vehicle plates: they name the car's owner."""

from __future__ import annotations

import re

from medrealmm.deid.recognizer import RegexRecognizer
from medrealmm.deid.spans import EntityType

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
