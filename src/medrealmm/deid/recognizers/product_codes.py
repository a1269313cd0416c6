"""Codes that number a product, not a person: drug approval numbers (国药准字H20003263),
device registration numbers (国械注准20153221234), model numbers (型号YE-680A), batch and lot
numbers. They have the shape of record numbers, so the number recognizers ask this module
whether a label of that class stands right before a candidate, and keep the code unmasked.
"""

from __future__ import annotations

import re

# The label classes, simplified and traditional: approval and registration, model, batch.
_PRODUCT_LABEL = re.compile(
    r"(?:国药准字|國藥準字|国药试字|批准文号|批准文號|药品批准|注册证号|注册证编号|註冊證號|"
    r"械注准|械注进|械注许|械备|械備|食药监械|国食健字|国食健注|卫食健字|卫妆准字|国妆特字|"
    r"型号|型號|规格型号|規格型號|规格|規格|货号|貨號|产品编号|產品編號|"
    r"批号|批號|生产批号|生產批號|批次|lot|LOT|Lot|REF|model|Model|MODEL)"
    r"(?:号|號|编号|編號|为|為|是|No\.?)?[\s:：#.]{0,2}$"
)
# How far back a label may start: the longest label and its separators.
_REACH = 12


def product_code_at(text: str, start: int) -> bool:
    """Whether a product-code label ends right before ``start`` in ``text``."""
    return _PRODUCT_LABEL.search(text, max(0, start - _REACH), start) is not None
