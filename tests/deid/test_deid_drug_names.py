"""Drug and herb names that begin with a surname character are kept, whichever recognizer
(context rules, jieba, the NER model) proposed them: the veto reads the name's shape (INN
stems, chemical-class characters, herb endings, dosage forms), not a list of drugs. The
phrases are written here; none comes from the evaluation set."""

from __future__ import annotations

import pytest

from medrealmm.deid.names import clinical_term_shaped
from medrealmm.deid.spans import EntityType
from medrealmm.deid.text import find_spans

FRAMES = ("医生让我吃{}，一天两次", "{}可以和别的药一起吃吗", "孩子吃了{}好点了", "最近在用{}")


@pytest.mark.parametrize(
    "drug",
    [
        "孟鲁司特",  # …司特 (leukotriene antagonists)
        "孟鲁司特钠",  # a salt after the stem
        "华法林",  # …法林
        "舒巴坦",  # …巴坦
        "罗格列酮",  # …列酮 (glitazones)
        "吉非替尼",  # …替尼 (kinase inhibitors)
        "米索前列醇",  # 前列… (prostaglandins)
        "贝伐珠单抗",  # …单抗 (antibodies)
        "柏子仁",  # herb seed: …子仁
        "石斛",  # herb-only character
        "秦皮",  # bark
        "田七",  # …七 (三七)
        "胡黄连",  # …黄连
        "蒲公英",  # …公英
        "童康片",  # dosage form inside the candidate
        "莫沙必利",  # …必利 (prokinetics)
        "熊胆粉",  # a powder
        "季德胜蛇药片",  # …药片 a few characters on
        "卢戈氏液",  # a solution named after a person
        "姜黄",  # …黄 (a root)
        "朱砂",  # a mineral
        "金钱草",  # …草
        "鹿角胶",  # …胶
        "叶酸",  # …酸
        "甘精胰岛素",  # …岛素
        "葛根芩连冲剂",  # a granule form a few characters on
        "潘高寿川贝枇杷露",  # a maker's name before a product: the form four characters on
        "马应龙麝香痔疮膏",
        "张仲景六味地黄丸",
    ],
)
def test_drug_and_herb_names_are_kept_in_every_phrasing(drug: str) -> None:
    for frame in FRAMES:
        text = frame.format(drug)
        at = text.index(drug)
        eaten = [s for s in find_spans(text) if s.start < at + len(drug) and s.end > at]
        assert not eaten, (text, eaten)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("吃了孟鲁司特", 2, 5),  # the model stopped inside the stem
        ("吃了罗格列酮", 2, 4),  # the stem runs on after the candidate
        ("喝点胡黄连", 2, 4),
        ("用了莫西沙星", 2, 4),
    ],
)
def test_drug_shaped_sees_a_stem_inside_or_running_on(text: str, start: int, end: int) -> None:
    assert clinical_term_shaped(text, start, end)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("我叫田志强，今年四十岁", "田志强"),
        ("孟凡英说她头疼", "孟凡英"),
        ("谢谢秦主任", "秦"),
        ("患者石磊，男", "石磊"),
        ("胡海燕的检查报告出来了", "胡海燕"),
        ("请找柏林医生", "柏林"),
        ("我叫李金子", "李金子"),
        ("张伟今天吃完饭后没有再喝川贝枇杷露", "张伟"),  # a clause between name and medicine
        ("给刘洋买了小儿止咳糖浆", "刘洋"),
    ],
)
def test_people_with_the_same_surnames_are_still_masked(text: str, name: str) -> None:
    masked = {s.text: s.type for s in find_spans(text)}
    assert masked.get(name) is EntityType.NAME, masked


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [("张三参加了体检", 0, 2), ("小七今天发烧", 0, 2), ("王芳在吃药", 0, 2)],
)
def test_a_following_word_does_not_make_a_name_a_drug(text: str, start: int, end: int) -> None:
    assert not clinical_term_shaped(text, start, end)


@pytest.mark.parametrize(
    "term", ["唐氏综合征", "霍奇金淋巴瘤", "柯萨奇病毒", "梅尼埃病", "范可尼贫血", "尤文肉瘤"]
)
def test_diseases_named_after_people_are_kept(term: str) -> None:
    text = f"医生说可能是{term}，要紧吗"
    at = text.index(term)
    assert not [s for s in find_spans(text) if s.start < at + len(term) and s.end > at]


@pytest.mark.parametrize(
    ("text", "name"), [("我爸张建国病了三天", "张建国"), ("刘晓燕症状好多了", "刘晓燕")]
)
def test_a_patient_who_is_ill_is_still_a_name(text: str, name: str) -> None:
    assert {s.text: s.type for s in find_spans(text)}.get(name) is EntityType.NAME


@pytest.mark.parametrize(
    ("text", "brand"),
    [
        ("孩子一直吃着钙尔奇", "钙尔奇"),
        ("贝因美的说明书上写着", "贝因美"),
        ("停用施图伦以后心跳快", "施图伦"),
        ("戴芬一天两次可以吗", "戴芬"),
        ("医生让我吃汤臣倍健", "汤臣倍健"),
        ("韩束能一起用吗", "韩束"),
        ("药品名称 柯丹 规格 10mg", "柯丹"),
    ],
)
def test_a_brand_used_like_a_medicine_is_kept(text: str, brand: str) -> None:
    at = text.index(brand)
    assert not [s for s in find_spans(text) if s.start < at + len(brand) and s.end > at]


def test_people_eating_together_are_still_names() -> None:
    masked = {s.text: s.type for s in find_spans("王建国能一起吃饭吗")}
    assert masked.get("王建国") is EntityType.NAME


def test_a_doctor_named_after_a_taking_verb_is_still_masked() -> None:
    masked = {s.text: s.type for s in find_spans("吃了郑医生开的药，好多了")}
    assert masked.get("郑") is EntityType.NAME


@pytest.mark.parametrize(
    "frame",
    [
        "之前用过{}，没什么用",  # a past use: 用过 / 涂过 / 服过
        "医生让我用{}，每天两次",  # a use someone advised
        "{}还可以继续用吗？",  # an adverb between the name and the question
        "{}和头孢能一起吃吗",  # taken with another medicine
    ],
)
@pytest.mark.parametrize("medicine", ["马应龙", "毛冬青", "白加黑", "季德胜"])
def test_a_medicine_named_in_a_use_context_is_kept(frame: str, medicine: str) -> None:
    text = frame.format(medicine)
    start = text.index(medicine)
    names = [s for s in find_spans(text) if s.type == EntityType.NAME]
    assert not [s for s in names if s.start < start + len(medicine) and s.end > start], names


@pytest.mark.parametrize(
    "text",
    ["王秀英和弟弟能一起吃吗", "用过张建国医生开的药", "刘晓燕可以继续吃辣吗"],
)
def test_people_in_the_same_phrases_are_still_masked(text: str) -> None:
    assert any(s.type == EntityType.NAME for s in find_spans(text)), text


def test_a_doubled_pet_name_after_a_full_name_is_no_dosage_form() -> None:
    """露 ends syrups (枇杷露, 金银花露), but 露露 is a pet name: the full name before it stays
    a name."""
    assert not clinical_term_shaped("你好？郑晓光露露在家吗", 3, 6)
    assert clinical_term_shaped("每天用金银花露擦", 3, 6)
