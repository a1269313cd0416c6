"""Identities propagate: a masked entity's derived forms are masked in every turn, and
ordinary words that look like one of those forms are not (every example is invented)."""

from __future__ import annotations

import pytest

from medrealmm.deid.consultation import deid_turns
from medrealmm.deid.propagate import hospital_forms, propagate
from medrealmm.deid.spans import EntityType, Span


def span(text: str, part: str, kind: EntityType) -> Span:
    start = text.index(part)
    return Span(start=start, end=start + len(part), type=kind, text=part, source="test")


def derived(texts: list[str], masked: list[list[tuple[str, EntityType]]]) -> list[list[str]]:
    spans = [[span(t, p, k) for p, k in m] for t, m in zip(texts, masked, strict=True)]
    return [[s.text for s in turn] for turn in propagate(texts, spans)]


@pytest.mark.parametrize(
    ("full", "short"),
    [
        ("上海瑞康医院", "瑞康"),  # the city dropped: the stem
        ("上海瑞康医院", "瑞康医院"),
        ("岭南大学附属第二医院", "岭南二院"),
        ("岭南大学附属第二医院", "岭大附二"),
        ("岭南大学附属第二医院", "二附院"),
        ("青川市第三人民医院", "市三院"),
        ("青川市第三人民医院", "青川三院"),
        ("云岭省人民医院", "省人医"),
        ("青川市妇幼保健院", "市妇幼"),
        ("滨江医科大学松林医院", "松林医院"),
    ],
)
def test_a_hospital_yields_its_stem_and_its_locals_abbreviations(full: str, short: str) -> None:
    forms, guarded = hospital_forms(full)
    assert short in forms | guarded


def test_generic_hospital_kinds_yield_no_stem() -> None:
    for full in ("青川市人民医院", "青川市中医院", "人民医院"):
        forms, guarded = hospital_forms(full)
        assert not {"人民", "中医", "青川市"} & (forms | guarded)


def test_a_hospitals_short_form_is_masked_in_a_later_turn() -> None:
    texts = [
        "上周在上海瑞康医院做的胃镜",
        "瑞康的医生说要复查",
        "去岭南大学附属第二医院也行",
        "岭南二院近",
    ]
    masked = [
        [("上海瑞康医院", EntityType.HOSPITAL)],
        [],
        [("岭南大学附属第二医院", EntityType.HOSPITAL)],
        [],
    ]
    assert derived(texts, masked) == [[], ["瑞康"], [], ["岭南二院"]]


def test_an_everyday_word_stem_counts_only_where_care_is_sought() -> None:
    texts = ["在长寿医院看过", "长寿复查说没事", "祝您长寿"]
    assert derived(texts, [[("长寿医院", EntityType.HOSPITAL)], [], []]) == [[], ["长寿"], []]


def test_a_surname_with_a_title_or_a_familiar_prefix_is_masked() -> None:
    texts = ["我叫岑秀兰", "岑阿姨您好，老岑说过", "小岑你好"]
    out = derived(texts, [[("岑秀兰", EntityType.NAME)], [], []])
    assert out == [[], ["岑阿姨", "老岑"], ["小岑"]]


def test_a_one_character_given_name_with_a_familiar_prefix_is_masked() -> None:
    texts = ["患者蒲琳", "阿琳说头疼"]
    assert derived(texts, [[("蒲琳", EntityType.NAME)], []]) == [[], ["阿琳"]]


def test_a_surname_ending_a_word_or_a_familiar_word_is_never_masked() -> None:
    # 任: 主任医生; 时: 小时; 叶: 小叶增生; 于: 小于
    names = ["任小明", "时光", "叶青", "于红", "周立"]  # 周: 周总|结
    also = [span(name, name, EntityType.NAME) for name in names]
    texts = ["主任医生说小时候的事", "乳腺小叶增生，结节小于5毫米", "下周总结一下"]
    assert propagate(texts, [[], [], []], also) == [[], [], []]


@pytest.mark.parametrize(
    "written", ["Cen Xiulan", "CEN XIULAN", "cenxiulan", "Xiulan Cen", "Xiu-lan Cen", "CXL"]
)
def test_a_masked_names_pinyin_and_initials_are_masked(written: str) -> None:
    texts = ["我叫岑秀兰", f"英文名写 {written} 就行"]
    assert derived(texts, [[("岑秀兰", EntityType.NAME)], []]) == [[], [written]]


def test_initials_that_spell_a_clinical_abbreviation_are_kept() -> None:
    texts = ["患者陈涛", "CT 提示结节"]  # 陈涛: C, T
    assert derived(texts, [[("陈涛", EntityType.NAME)], []]) == [[], []]


def test_pinyin_inside_a_longer_latin_word_is_kept() -> None:
    texts = ["患者岑秀兰", "cenxiulanxyz 不是名字"]
    assert derived(texts, [[("岑秀兰", EntityType.NAME)], []]) == [[], []]


def test_the_other_half_of_a_split_number_is_masked() -> None:
    texts = ["电话是139 0471", "2856，打这个"]
    masked = [[("139 0471", EntityType.PHONE)], []]
    assert derived(texts, masked) == [[], ["2856"]]
    lines = ["身份证 4401061990", "03150018 记一下"]
    assert derived(["\n".join(lines)], [[("4401061990", EntityType.ID)]]) == [["03150018"]]


def test_a_number_already_whole_takes_no_half() -> None:
    texts = ["电话13904712856", "2024年复查"]
    assert derived(texts, [[("13904712856", EntityType.PHONE)], []]) == [[], []]


def test_entities_masked_elsewhere_propagate_into_these_texts() -> None:
    lines = ["送检医院：瑞康", "岑阿姨"]
    also = [
        span("上海瑞康医院", "上海瑞康医院", EntityType.HOSPITAL),
        span("岑秀兰", "岑秀兰", EntityType.NAME),
    ]
    out = propagate(lines, [[], []], also)
    assert [[s.text for s in turn] for turn in out] == [["瑞康"], ["岑阿姨"]]
    assert all(s.source == "propagation" for turn in out for s in turn)


def test_nothing_masked_propagates_nothing() -> None:
    texts = ["咳嗽三天，小张医生", "小叶增生"]
    assert propagate(texts, [[], []]) == [[], []]


async def test_deid_turns_masks_the_derived_forms() -> None:
    outcome = await deid_turns(["我叫岑秀兰，在上海瑞康医院看过", "瑞康的医生说老岑没事"])
    assert outcome.masked[1] == "[HOSPITAL]的医生说[NAME]没事"
