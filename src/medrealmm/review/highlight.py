"""Split text into plain and masked-placeholder segments so masked spans can be highlighted,
and mark the near-misses de-identification left unmasked (``deid.record.Suspect``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from markupsafe import Markup, escape

from medrealmm.deid.record import Suspect

# Typed placeholders written by de-identification: [NAME], [PHONE], [ID_NUMBER], [地址] ...
PLACEHOLDER = re.compile(r"\[(?:[A-Z][A-Z0-9_]*|[\u4e00-\u9fff]{1,8})\]")


def segments(text: str) -> list[tuple[str, bool]]:
    """(piece, is_placeholder) in order; joining the pieces gives back ``text``."""
    out: list[tuple[str, bool]] = []
    cursor = 0
    for match in PLACEHOLDER.finditer(text):
        if match.start() > cursor:
            out.append((text[cursor : match.start()], False))
        out.append((match.group(0), True))
        cursor = match.end()
    if cursor < len(text):
        out.append((text[cursor:], False))
    return out


def highlight_html(text: str) -> Markup:
    """HTML-escaped text with each placeholder wrapped in ``<mark class="masked">``."""
    parts = [
        Markup('<mark class="masked">{}</mark>').format(piece) if masked else escape(piece)
        for piece, masked in segments(text)
    ]
    return Markup("").join(parts)


def highlight_with_suspects(text: str, suspects: Sequence[Suspect]) -> Markup:
    """``highlight_html`` plus each near-miss wrapped in ``<mark class="suspect">`` with its
    reason as a title (``suspect_title``); suspects are outside placeholders, so the two
    never nest."""
    parts: list[Markup] = []
    cursor = 0
    for suspect in sorted(suspects, key=lambda s: s.start):
        if suspect.start < cursor or suspect.end > len(text):
            continue  # a stale record: never break the page over it
        parts.append(highlight_html(text[cursor : suspect.start]))
        parts.append(
            Markup('<mark class="suspect" title="{}">{}</mark>').format(
                suspect_title(suspect), text[suspect.start : suspect.end]
            )
        )
        cursor = suspect.end
    parts.append(highlight_html(text[cursor:]))
    return Markup("").join(parts)


SUSPECT_LABELS = {
    "vetoed": "模型提出但被规则否决",
    "frame": "上下文像身份信息",
    "shape": "形似编号或账号",
    "proper_noun": "未遮盖的专有名词",  # records written before suspects carried evidence
}
# The evidence of suspects that are not a veto class's drop (``deid.near_miss``).
EVIDENCE_LABELS = {
    "model": "模型半信的人名或机构",
    "person_frame": "人物语境中的生词",
    "care_frame": "就医语境中的生词（医院简称？）",
    "label_value": "身份字段后未遮盖的值",
    "id_shape": "形似账号、编号或门牌",
    "continues_mask": "紧接已遮盖地址或机构的剩余部分",
}

# The veto classes of ``deid.term_vetoes`` (and ``medicine``: a span that was all medicine),
# as a reviewer reads them; the class name follows in brackets, as the export writes it.
VETO_LABELS = {
    "product_code": "产品编码",
    "brand_before_model": "品牌+型号",
    "dialect_pronoun_or_insurance": "方言代词或医保用语",
    "dosage_or_food_form": "剂型或食品形态",
    "drug_stem": "药名片段",
    "clinical_term_shape": "临床术语形态",
    "used_like_a_medicine": "用法像药品",
    "tcm_herb": "中药材名",
    "eponym": "以人名命名的病名或体征",
    "body_site": "身体部位",
    "generic_facility": "泛指的医疗机构类型",
    "public_figure": "以公职或荣誉称呼的公众人物",
    "medicine": "药品名",
}


def suspect_title(suspect: Suspect) -> str:
    """Why the machine shows ``suspect``, as the page shows it: a veto class by name
    (``已否决：药名片段 (drug_stem)``), else its evidence (``身份字段后未遮盖的值``), else the
    kind (records written before suspects carried their evidence)."""
    if suspect.reason is not None:
        return near_miss_title(suspect.reason)
    return SUSPECT_LABELS.get(suspect.kind, suspect.kind)


def near_miss_title(label: str) -> str:
    """The same for a reason alone (an image's near-miss carries only that): a veto class,
    a kind of evidence, or an older record's ``proper_noun``."""
    if label in VETO_LABELS:
        return f"已否决：{VETO_LABELS[label]} ({label})"
    if label in EVIDENCE_LABELS:
        return f"{EVIDENCE_LABELS[label]} ({label})"
    return SUSPECT_LABELS.get(label, label)
