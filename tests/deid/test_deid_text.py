from __future__ import annotations

import pytest

from medrealmm.deid.metrics import TypeScores
from medrealmm.deid.recognizer import find_each
from medrealmm.deid.registry import rules_registry
from medrealmm.deid.spans import EntityType, Span, apply_placeholders, resolve_overlaps
from medrealmm.deid.text import (
    find_spans,
    make_consistent,
    plain_text,
    screen_proposals,
    screen_spans,
    screen_spans_in,
)
from medrealmm.testing.deid_regression_set import make_sentences


def span(start: int, end: int, kind: EntityType, text: str = "x") -> Span:
    return Span(start=start, end=end, type=kind, text=text, source="test")


def test_longer_span_wins_an_overlap_then_the_more_specific_type() -> None:
    a = span(0, 5, EntityType.NAME)
    b = span(2, 12, EntityType.ADDRESS)
    c = span(20, 25, EntityType.ADDRESS)
    d = span(20, 25, EntityType.PHONE)
    assert resolve_overlaps([a, b, c, d]) == [b, d]


def test_apply_placeholders_refuses_overlaps() -> None:
    with pytest.raises(ValueError, match="overlap"):
        apply_placeholders("abcdef", [span(0, 3, EntityType.NAME), span(2, 4, EntityType.ID)])


def test_every_type_has_its_bracketed_placeholder() -> None:
    assert {t.placeholder for t in EntityType} == {
        "[NAME]",
        "[ID]",
        "[PHONE]",
        "[EMAIL]",
        "[URL]",
        "[ORDER_ID]",
        "[MRN]",
        "[HOSPITAL]",
        "[ORG]",
        "[ADDRESS]",
        "[DATE]",
    }


def test_an_entity_found_once_is_masked_in_every_turn() -> None:
    turns = ["我叫朱秀英，脚痒两周了。", "秀英您好，请发照片。", "朱秀英的家人也有脚气吗？"]
    rules = rules_registry()  # the rules alone miss the bare given name in turn 2
    spans = make_consistent(turns, [find_spans(t, rules) for t in turns])
    masked = [apply_placeholders(t, s) for t, s in zip(turns, spans, strict=True)]
    assert masked == [
        "我叫[NAME]，脚痒两周了。",
        "[NAME]您好，请发照片。",
        "[NAME]的家人也有脚气吗？",
    ]
    assert {s.source for s in spans[1]} == {"consistency"}


def test_a_string_typed_two_ways_takes_its_majority_type_everywhere() -> None:
    turns = ["ab", "ab", "ab"]
    spans = [
        [span(0, 2, EntityType.NAME, "ab")],
        [span(0, 2, EntityType.NAME, "ab")],
        [span(0, 2, EntityType.HOSPITAL, "ab")],
    ]
    out = make_consistent(turns, spans)
    assert [turn[0].type for turn in out] == [EntityType.NAME] * 3


def test_eval_set_is_large_labeled_and_offsets_are_exact() -> None:
    sentences = make_sentences()
    assert len(sentences) >= 300
    assert {s.type for sentence in sentences for s in sentence.spans} == set(EntityType)
    for sentence in sentences:
        for s in sentence.spans:
            assert sentence.text[s.start : s.end] == s.text


def test_rule_path_meets_the_recall_and_precision_targets_on_the_eval_set() -> None:
    scores = TypeScores()
    kept = total = 0
    for sentence in make_sentences():
        predicted = find_spans(sentence.text)
        scores.add(sentence.spans, predicted)
        masked = apply_placeholders(sentence.text, predicted)
        total += len(sentence.clinical)
        kept += sum(value in masked for value in sentence.clinical)
    for kind in ("ID", "PHONE", "EMAIL", "URL"):
        assert scores.recall(kind) >= 0.98, kind
    for kind in ("NAME", "HOSPITAL"):
        assert scores.recall(kind) >= 0.90, kind
    assert scores.precision() >= 0.90
    assert kept == total


def test_a_given_name_that_is_a_common_word_masks_only_the_full_name() -> None:
    turns = ["患者王平安，男，50岁。", "王平安今天复查，平安无事。"]
    spans = make_consistent(turns, [find_spans(t) for t in turns])
    masked = [apply_placeholders(t, s) for t, s in zip(turns, spans, strict=True)]
    assert masked[1] == "[NAME]今天复查，平安无事。"


def test_a_window_gives_each_text_the_spans_of_running_every_recognizer_on_it_alone() -> None:
    """``find_each`` runs one recognizer over a window (a regex one loops over the texts
    itself): each text must still get what ``find`` gives it, recognizer by recognizer in
    the registry's order, and the kept and vetoed spans of one text at a time."""
    texts = [s.text for s in make_sentences(seed=7, n=60)]
    texts += ["", "手机１３８００１３８０００，我叫王小明", "住在城西区果园路12号", "无"]
    registry = list(rules_registry())
    plains = [plain_text(t) for t in texts if t]
    raw: list[list[Span]] = [[] for _ in plains]
    for recognizer in registry:
        for i, spans in find_each(recognizer, plains):
            raw[i].extend(spans)
    assert raw == [[s for r in registry for s in r.find(plain)] for plain in plains]
    assert any(raw)
    windowed = screen_spans_in(texts, registry)
    assert windowed == [screen_spans(t, registry) for t in texts]
    assert windowed[texts.index("")] == ([], [])


def test_plain_text_reads_traditional_characters_as_simplified_one_for_one() -> None:
    text = "陳醫生您好，我住在臺北市民生東路二段15號，電話０９１２３４５６７８"
    plain = plain_text(text)
    assert len(plain) == len(text)
    assert plain.startswith("陈医生您好，我住在台北市民生东路二段15号")
    assert plain.endswith("0912345678")
    assert plain_text("患者王小明，头痛三天") == "患者王小明，头痛三天"


@pytest.mark.parametrize(
    ("simplified", "traditional"),
    [
        (
            "我叫颜美丽，在台北荣民总医院看过，电话0912345678",
            "我叫顏美麗，在臺北榮民總醫院看過，電話0912345678",
        ),
        (
            "家住高雄市苓雅区四维三路6号之2，简志明医生您好",
            "家住高雄市苓雅區四維三路6號之2，簡志明醫生您好",
        ),
    ],
)
def test_traditional_text_is_masked_where_its_simplified_twin_is(
    simplified: str, traditional: str
) -> None:
    """Written as Hong Kong, Macau and Taiwan write, the same identifiers at the same places:
    spans keep the original characters."""
    twin = find_spans(simplified)
    spans = find_spans(traditional)
    assert [(s.start, s.end, s.type) for s in spans] == [(s.start, s.end, s.type) for s in twin]
    assert all(s.text == traditional[s.start : s.end] for s in spans)
    assert twin


def test_clinical_terms_in_traditional_characters_stay() -> None:
    text = "阿莫西林膠囊一天三次，布洛芬緩釋膠囊疼時吃，血壓150/95，糖化血紅蛋白7.2%"
    assert find_spans(text) == []


def test_proposals_are_screened_as_the_recognizers_read_the_text() -> None:
    """An LLM pass's proposal over a herb written in traditional characters (金銀花) is
    vetoed as its simplified form is; a kept proposal keeps the text's own characters."""
    text = "陳美玲買了金銀花泡水"
    name = Span(start=0, end=3, type=EntityType.NAME, text="陳美玲", source="llm")
    herb = Span(start=5, end=8, type=EntityType.NAME, text="金銀花", source="llm")
    kept, dropped = screen_proposals(text, [name, herb])
    assert kept == [name]
    assert [s.text for s, _ in dropped] == ["金銀花"]
