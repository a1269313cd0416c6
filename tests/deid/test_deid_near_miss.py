"""Suspects for the reviewer come from evidence, each with its reason, placed in the masked
text: a judgement-call veto, the model's half-belief, a person or care frame around an unknown
word, an identifier label's value, an account shape, the rest of a place the mask stopped
short of; never a common word. Every example is invented."""

from __future__ import annotations

import pytest

from medrealmm.deid.consultation import deid_turns
from medrealmm.deid.near_miss import find_suspects, masked_offset, near_misses
from medrealmm.deid.record import DeidRecord, TurnRecord
from medrealmm.deid.spans import EntityType, Span, apply_placeholders
from medrealmm.deid.text import find_spans, screen_spans


def span(start: int, end: int, kind: EntityType, text: str) -> Span:
    return Span(start=start, end=end, type=kind, text=text, source="test")


def test_a_drug_the_model_took_for_a_person_is_no_suspect() -> None:
    text = "我叫朱秀英，问问白加黑的副作用。"
    spans = find_spans(text)
    assert find_suspects(text, spans) == []  # the medicine lexicon knows 白加黑


@pytest.mark.parametrize(
    ("text", "part", "why"),
    [
        ("我叫朱秀英，佳乐按时吃，头还是疼", "佳乐", "used_like_a_medicine"),
        ("舒眠宁吃完两盒还是睡不着", "舒眠宁", "used_like_a_medicine"),
        ("张伯礼院士说中药有用", "张伯礼", "public_figure"),
    ],
)
def test_a_judgement_call_veto_is_a_suspect_with_its_class(text: str, part: str, why: str) -> None:
    kept, dropped = screen_spans(text)
    assert (part, why) in {(s.text, reason) for s, reason in dropped}
    masked = apply_placeholders(text, kept)
    suspects = find_suspects(text, kept, dropped)
    shown = {(masked[s.start : s.end], s.kind, s.reason) for s in suspects}
    assert (part, "vetoed", why) in shown


def test_sure_veto_classes_are_not_shown_and_one_drop_shows_once() -> None:
    text = "问一下斯达舒，还有俺娘的药，钟南山院士说"

    def drop(part: str, source: str, why: str) -> tuple[Span, str]:
        start = text.index(part)
        return Span(
            start=start, end=start + len(part), type=EntityType.NAME, text=part, source=source
        ), why

    dropped = [
        drop("斯达", "lac_ner", "medicine"),  # sure of itself: not shown
        drop("俺娘", "name_jieba_nr", "dialect_pronoun_or_insurance"),
        drop("钟南", "lac_ner", "public_figure"),
        drop("钟南山", "llm", "public_figure"),  # the longer of two drops at one place
    ]
    suspects = find_suspects(text, [], dropped)
    assert [(text[s.start : s.end], s.reason, s.source) for s in suspects] == [
        ("钟南山", "public_figure", "llm:NAME"),
    ]


@pytest.mark.parametrize(
    ("text", "part", "reason"),
    [
        ("抖音号kxq_20240 找我", "kxq_20240", "label_value"),
        ("病理号：Q2031-00817", "Q2031-00817", "label_value"),
        ("Name: LIAN QIUSHENG，DOB 见上", "LIAN QIUSHENG", "label_value"),
        ("加我 moonfox7731 备注看病", "moonfox7731", "id_shape"),
        ("我在翠溪苑12-3-1402等你", "12-3-1402", "id_shape"),
        ("上周喺瑞岭睇咗，话系湿疹", "瑞岭", "care_frame"),
        ("离岐山三近，挂哪个科", "岐山三", "care_frame"),
        ("我们村小芊也是这个病", "小芊", "person_frame"),
        ("上次蔺医生说要复查", "蔺", "person_frame"),
    ],
)
def test_each_kind_of_evidence_is_a_suspect_with_its_reason(
    text: str, part: str, reason: str
) -> None:
    shown = {(text[s.start : s.end], s.reason) for s in near_misses(text, [])}
    assert (part, reason) in shown


def test_a_hospitals_number_after_a_partial_mask_is_a_suspect() -> None:
    text = "离岐山三近，挂哪个科"
    masked = [span(1, 3, EntityType.HOSPITAL, "岐山")]
    shown = {(text[s.start : s.end], s.reason) for s in near_misses(text, masked)}
    assert ("三", "continues_mask") in shown


def test_the_rest_of_a_place_the_mask_stopped_short_of_is_a_suspect() -> None:
    text = "地址临川区文昌路8号翠溪苑12栋3单元1402，早上有人"
    estate = text.index("翠溪苑")
    masked = [span(text.index("临川区"), estate, EntityType.ADDRESS, text[:estate])]
    shown = {(text[s.start : s.end], s.reason) for s in near_misses(text, masked)}
    assert ("翠溪苑12栋3单元1402", "continues_mask") in shown


@pytest.mark.parametrize(
    "text",
    [
        "谢谢医生，祝您工作顺利！明白了。",
        "老公也有脚气，家里人要注意吗",
        "在医生指导下用药，布洛芬一次一片",
        "乳腺癌术后复查，肿瘤标志物CA19-9正常，HbA1c 6.1%",
        "国药准字H20043263的药能吃吗",
        "血压140/90mmHg，每天1000ml水",
        "诊断E11.900，血压计欧姆龙HEM-7136测的",  # an ICD code, a model number
        "复查带上出院小结和门诊病历",  # 小结: a word, no familiar form
        "建议先到肝胆外科看一下，出院诊断是胆囊炎",  # a department, a care verb
        "地址不影响，这个号码能查到结果吗",  # a label and no value after it
        "喝美托洛尔的时候能吃京东买的药吗",  # a drug stem, a short platform name
    ],
)
def test_common_words_and_clinical_text_are_never_suspects(text: str) -> None:
    assert near_misses(text, find_spans(text)) == []


async def test_the_stage_outcome_carries_every_drop_and_the_record_holds_no_text() -> None:
    turns = ["我叫朱秀英", "舒眠宁吃完两盒还是睡不着"]
    outcome = await deid_turns(turns)
    assert [[why for _, why in turn] for turn in outcome.vetoed] == [[], ["used_like_a_medicine"]]
    record = DeidRecord(
        consultation_id="c",
        turns=[
            TurnRecord(event=i, suspects=find_suspects(t, s, v))
            for i, (t, s, v) in enumerate(zip(turns, outcome.spans, outcome.vetoed, strict=True))
        ],
    )
    stored = record.model_dump_json()
    assert "used_like_a_medicine" in stored
    assert "舒眠宁" not in stored and "朱秀英" not in stored  # offsets and classes, never text


def test_what_was_masked_is_never_a_suspect() -> None:
    text = "张伟说他的朋友李明也来了"
    spans = find_spans(text)
    assert {s.text for s in spans} >= {"张伟", "李明"}
    masked = apply_placeholders(text, spans)
    assert all("[" not in masked[s.start : s.end] for s in find_suspects(text, spans))


def test_clean_clinical_text_has_no_suspects() -> None:
    text = "咳嗽三天，体温38.5℃，吃了布洛芬，血常规白细胞偏高。"
    assert find_suspects(text, find_spans(text)) == []


def test_offsets_shift_by_each_placeholder_before_them() -> None:
    spans = [span(2, 5, EntityType.NAME, "朱秀英"), span(8, 19, EntityType.PHONE, "13912345678")]
    assert masked_offset(0, spans) == 0
    assert masked_offset(6, spans) == 6 + len("[NAME]") - 3
    assert masked_offset(20, spans) == 20 + (len("[NAME]") - 3) + (len("[PHONE]") - 11)
