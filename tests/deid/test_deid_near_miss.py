"""Near-misses for the reviewer: what the model proposed and a veto dropped, and proper nouns
no recognizer masked, placed in the masked text."""

from __future__ import annotations

from medrealmm.deid.near_miss import find_suspects, masked_offset
from medrealmm.deid.spans import EntityType, Span, apply_placeholders
from medrealmm.deid.text import find_spans


def span(start: int, end: int, kind: EntityType, text: str) -> Span:
    return Span(start=start, end=end, type=kind, text=text, source="test")


def test_a_vetoed_drug_name_is_a_suspect_at_its_place_in_the_masked_text() -> None:
    text = "我叫朱秀英，问问白加黑的副作用。"
    spans = find_spans(text)
    masked = apply_placeholders(text, spans)
    suspects = find_suspects(text, spans)
    assert [(masked[s.start : s.end], s.kind) for s in suspects] == [("白加黑", "vetoed")]
    assert suspects[0].source == "lac_ner:PER"


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
