"""Near-misses for the reviewer: what a veto class or the model's own check dropped (with
why), and proper nouns no recognizer masked, placed in the masked text."""

from __future__ import annotations

import itertools

import pytest

from medrealmm.deid.consultation import deid_turns
from medrealmm.deid.near_miss import find_suspects, masked_offset
from medrealmm.deid.record import DeidRecord, TurnRecord
from medrealmm.deid.spans import EntityType, Span, apply_placeholders
from medrealmm.deid.text import find_spans, screen_spans


def span(start: int, end: int, kind: EntityType, text: str) -> Span:
    return Span(start=start, end=end, type=kind, text=text, source="test")


def test_a_vetoed_drug_name_is_a_suspect_at_its_place_in_the_masked_text() -> None:
    text = "我叫朱秀英，问问白加黑的副作用。"
    spans = find_spans(text)
    masked = apply_placeholders(text, spans)
    suspects = find_suspects(text, spans)
    assert [(masked[s.start : s.end], s.kind) for s in suspects] == [("白加黑", "vetoed")]
    assert suspects[0].source == "lac_ner:PER" and suspects[0].reason == "model"


@pytest.mark.parametrize(
    ("text", "part", "why"),
    [
        ("我叫朱秀英，佳乐按时吃，头还是疼", "佳乐", "used_like_a_medicine"),
        ("舒眠宁吃完两盒还是睡不着", "舒眠宁", "used_like_a_medicine"),
    ],
)
def test_every_veto_class_drop_is_a_suspect_with_its_class(text: str, part: str, why: str) -> None:
    kept, dropped = screen_spans(text)
    assert (part, why) in {(s.text, reason) for s, reason in dropped}
    masked = apply_placeholders(text, kept)
    suspects = find_suspects(text, kept, dropped)
    shown = {(masked[s.start : s.end], s.kind, s.reason) for s in suspects}
    assert (part, "vetoed", why) in shown


def test_a_drop_of_each_class_is_shown_once_before_the_model_check_and_the_tags() -> None:
    text = "问一下斯达舒，还有俺娘的药"

    def drop(start: int, end: int, source: str, why: str) -> tuple[Span, str]:
        part = text[start:end]
        return Span(start=start, end=end, type=EntityType.NAME, text=part, source=source), why

    dropped = [
        drop(3, 5, "lac_ner", "medicine"),
        drop(3, 6, "llm", "medicine"),  # the longer of two drops at one place is shown
        drop(9, 11, "name_jieba_nr", "dialect_pronoun_or_insurance"),
    ]
    suspects = find_suspects(text, [], dropped)
    assert [(text[s.start : s.end], s.reason, s.source) for s in suspects[:2]] == [
        ("斯达舒", "medicine", "llm:NAME"),
        ("俺娘", "dialect_pronoun_or_insurance", "name_jieba_nr:NAME"),
    ]
    starts = [(s.start, s.end) for s in suspects]
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(starts))  # never overlap


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
