"""The canonical reading: what it folds, what it leaves, and that spans map back exactly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medrealmm.deid.reading import canonical_reading, to_original
from medrealmm.deid.registry import rules_registry
from medrealmm.deid.spans import EntityType
from medrealmm.deid.text import find_spans

RULES = rules_registry()


@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("电话１３８－１２３４－５６７８", "电话13812345678"),
        ("手机138 1234 5678。", "手机13812345678。"),
        ("手机138🌟1234🌟5678", "手机13812345678"),
        ("手机138·1234·5678", "手机13812345678"),
        ("电话幺三八 幺二三四 五六七八", "电话13812345678"),
        ("号码是一三八洞洞幺三八洞洞洞", "号码是13800138000"),
        ("手机1⃣3⃣9⃣0⃣0⃣1⃣3⃣9⃣0⃣0⃣0⃣", "手机13900139000"),
        ("患者张\u200b伟，男", "患者张伟，男"),
        ("微信 w x i d 8 8 7 a b c", "微信 wxid887abc"),
        ("电话138 1234\n5678", "电话13812345678"),
        ("电话13812345\n678", "电话13812345678"),
        ("身份证4403 0419 8805 1230 17", "身份证440304198805123017"),
        ("手机139一2345一6789", "手机13923456789"),
        ("陳醫生", "陈医生"),
    ],
)
def test_disguised_writings_read_canonically(text: str, reading: str) -> None:
    assert canonical_reading(text).text == reading


@pytest.mark.parametrize(
    "text",
    [
        "体温36.5 37.2 38.1，血压120 80",
        "复查 2023-05-06 和 2021.07.09",
        "服务器 192.168.1.100",
        "参考范围3.5-5.5 100-300",
        "(020)8765-4321-805",
        "+852 9123 4567",
        "卡号6222 6001 2345 6789",
        "两个人一起吃了三四天",
        "第一二三四组",
        "1234567\n7654321",
        "2023-05-06\n13800138000",
        "剂量 250.500.1000 IU",
        "Hotel 2 3 4 5 6 7 8",
    ],
)
def test_layouts_the_rules_read_and_clinical_text_stay(text: str) -> None:
    reading, origin = canonical_reading(text)
    assert reading == text
    assert isinstance(origin, range)


def test_a_number_whose_grouping_is_its_disguise_is_masked_over_its_separators() -> None:
    text = "加我电话：幺三八🌟1234🌟五六七八，谢谢"
    (span,) = find_spans(text, RULES)
    assert span.type is EntityType.PHONE
    assert span.text == "幺三八🌟1234🌟五六七八"


def test_a_resident_id_grouped_in_fours_is_an_id_not_a_card_and_keeps_its_tail() -> None:
    text = "身份证号 4403 0419 8805 1230 17 已核对"
    (span,) = find_spans(text, RULES)
    assert (span.type, span.text) == (EntityType.ID, "4403 0419 8805 1230 17")


_SEPARATORS = [" ", "-", ".", "·", "🌟", "\u200b", "  ", "\u3000", "－", "\n"]
_IDENTIFIERS = [
    ("手机", "13912345678", EntityType.PHONE),
    ("身份证号", "440304198805123017", EntityType.ID),
    ("身份证号", "11010519491231002X", EntityType.ID),
]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    which=st.sampled_from(_IDENTIFIERS),
    cuts=st.lists(st.tuples(st.integers(1, 17), st.sampled_from(_SEPARATORS)), max_size=4),
    before=st.sampled_from(["", "您好，", "患者家属 "]),
    after=st.sampled_from(["", "，谢谢", " 三天后复诊"]),
)
def test_random_separators_never_move_a_span_off_its_characters(
    which: tuple[str, str, EntityType],
    cuts: list[tuple[int, str]],
    before: str,
    after: str,
) -> None:
    label, value, kind = which
    written = value
    for at, sep in sorted(cuts, reverse=True):
        at = min(at, len(value) - 1)
        written = written[:at] + sep + written[at:]
    text = f"{before}{label}{written}{after}"
    start = len(before) + len(label)
    spans = [s for s in find_spans(text, RULES) if s.type is kind]
    # Where the identifier is found, its span holds exactly the written characters.
    for span in spans:
        assert text[span.start : span.end] == span.text
        assert start <= span.start and span.end <= start + len(written)
    # Any span of the reading maps back onto the original characters, in order.
    reading, origin = canonical_reading(text)
    assert len(reading) <= len(text)
    assert list(origin) == sorted(set(origin))
    for i in range(len(reading)):
        lo, hi = to_original(origin, i, i + 1)
        assert hi == lo + 1


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    value=st.sampled_from(["13912345678", "440304198805123017"]),
    sep=st.sampled_from([" ", "-", "🌟", "·", "\u200b"]),
    size=st.integers(2, 5),
)
def test_a_number_spaced_out_in_even_groups_is_found_whole(value: str, sep: str, size: int) -> None:
    if len(value) == 11 and size < 4 and sep == " ":
        return  # a mobile in spaced pairs or triples reads as a table of values (150 230 180)
    written = sep.join(value[i : i + size] for i in range(0, len(value), size))
    text = f"联系方式：{written}。"
    found = [s for s in find_spans(text, RULES) if s.type in (EntityType.PHONE, EntityType.ID)]
    assert [s.text for s in found] == [written]
