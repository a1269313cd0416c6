"""Veto classes and the medicine cut, one test per class: a span any recognizer (or the LLM
pass) proposed is dropped or cut back when it is a clinical or commercial term, and a real
name in the same shape of sentence stays. Phrases are written here for the purpose; none comes
from an evaluation set."""

from __future__ import annotations

import json

import pytest

from medrealmm.deid.consultation import deid_turns
from medrealmm.deid.cut_medicines import cut_medicine
from medrealmm.deid.spans import EntityType, Span
from medrealmm.deid.term_vetoes import _BY_TYPE, VETOES, screen, veto_class
from medrealmm.llm import OpenAICompatibleClient
from medrealmm.testing import FakeOpenAIServer, FakeReply


def span(text: str, part: str, source: str = "lac_ner", kind: EntityType = EntityType.NAME) -> Span:
    start = text.index(part)
    return Span(start=start, end=start + len(part), type=kind, text=part, source=source)


def verdict(text: str, part: str, **kwargs: object) -> str | None:
    _, dropped = screen(text, [span(text, part, **kwargs)])  # type: ignore[arg-type]
    return dropped[0][1] if dropped else None


@pytest.mark.parametrize(
    ("text", "part", "why"),
    [
        # a brand the lexicon knows, the span begins inside it
        ("胃胀吃斯达舒管用吗", "斯达", "medicine"),
        ("孩子在吃钙尔奇，还要补别的吗", "钙尔", "medicine"),
        # a herb of the Pharmacopoeia's list, alone, with its dose, or a span inside one
        ("石斛3g煎水喝", "石斛3g", "tcm_herb"),
        ("王不留行怎么煎", "王不留", "tcm_herb"),
        ("徐长卿煎水喝了一周", "徐长卿", "tcm_herb"),
        # an INN stem inside the span or the word it starts
        ("列净类的药比如恩格列净", "恩格列净", "drug_stem"),
        ("利福喷丁一周两次", "利福", "drug_stem"),
        # a food the span runs into, then eating it
        ("卤味少吃，蒋记鸭少吃", "蒋记", "dosage_or_food_form"),
        # eponymous signs, points and diseases
        ("查体麦氏点有压痛", "麦氏点", "eponym"),
        ("墨菲氏征阴性", "墨菲", "eponym"),
        ("考虑库欣综合征", "库欣", "eponym"),
        ("帕金森病手抖", "帕金", "eponym"),
        # a side and a body part
        ("右膝肿了三天", "右膝肿", "body_site"),
        # a public figure named with a public office or honour
        ("钟南山院士说要戴口罩", "钟南山", "public_figure"),
        # an insurance category patients name
        ("慢阻肺门慢要办吗", "门慢", "dialect_pronoun_or_insurance"),
        # a piece of a chemical name
        ("苯磺酸氨氯地平一天一片", "地平", "drug_stem"),
        ("盐酸二甲双胍吃了三年", "二甲", "drug_stem"),
        # a dosage or food form ends the span
        ("姜黄粉吃了两天", "姜黄粉", "dosage_or_food_form"),
        # an unknown brand used as a medicine, found with no cue
        ("佳乐按时吃，头还是疼", "佳乐", "used_like_a_medicine"),
        ("舒眠宁吃完两盒还是睡不着", "舒眠宁", "used_like_a_medicine"),
        ("康肤宁涂了五天没见好", "康肤宁", "used_like_a_medicine"),
        ("安眠宁要吃几天", "安眠宁", "used_like_a_medicine"),
        # a maker before its model number
        ("家里用的松下EW3152测的", "松下", "brand_before_model"),
        # dialect pronouns and insurance words
        ("俺娘腿疼好几年了", "俺娘", "dialect_pronoun_or_insurance"),
        ("新农合能报多少", "新农合", "dialect_pronoun_or_insurance"),
    ],
)
def test_each_veto_class_drops_its_kind(text: str, part: str, why: str) -> None:
    assert verdict(text, part) == why


@pytest.mark.parametrize("facility", ["社区医院", "乡镇卫生院", "私人诊所", "诊所", "县中医院"])
def test_a_generic_facility_with_no_place_in_it_is_no_hospital(facility: str) -> None:
    text = f"先去{facility}看看"
    assert verdict(text, facility, source="hospital", kind=EntityType.HOSPITAL) == (
        "generic_facility"
    )


@pytest.mark.parametrize("hospital", ["青川市第一人民医院", "仁和诊所", "省人民医院", "市一院"])
def test_a_named_facility_stays(hospital: str) -> None:
    text = f"先去{hospital}看看"
    assert verdict(text, hospital, source="hospital", kind=EntityType.HOSPITAL) is None


def test_a_product_code_is_no_phone() -> None:
    text = "批准文号国药准字H13023455"
    assert verdict(text, "H13023455", kind=EntityType.PHONE, source="phone_any_shape") == (
        "product_code"
    )


@pytest.mark.parametrize(
    ("text", "part", "source"),
    [
        ("我叫王安婷，咳嗽三天", "王安婷", "name_context"),  # a brand-like given name
        ("患者张伟按时吃了药还是疼", "张伟", "name_context"),  # a cue before the name
        ("佳乐按时吃，头还是疼", "佳乐", "name_context"),
        ("受检者：刘芳 ALT 56 U/L", "刘芳", "lac_ner"),  # a lab value is no model number
        ("李建国吃完饭就胃疼", "李建国", "lac_ner"),  # a meal, not a course of medicine
        ("赵丽吃了三天药还在烧", "赵丽", "lac_ner"),  # a person's course of medicine
        ("张伟口服阿莫西林后好转", "张伟", "lac_ner"),  # a verb with an object after a name
        ("我叫徐长卿，咳嗽三天", "徐长卿", "name_context"),  # a herb's name given after a cue
        ("李明心脏病又犯了", "李明", "lac_ner"),  # a person's illness, no eponym
        ("张伟病了三天", "张伟", "lac_ner"),
        ("王芳病情稳定", "王芳", "lac_ner"),
        ("张文宏医生说要复查", "张文宏", "lac_ner"),  # a clinician's title: masked, however famous
        ("左晓东腿疼", "左晓东", "name_context"),  # a surname 左 before no body part
    ],
)
def test_names_in_the_same_shapes_stay(text: str, part: str, source: str) -> None:
    assert verdict(text, part, source=source) is None


def test_a_name_before_a_medicine_is_cut_back_not_dropped() -> None:
    text = "王建国钙尔奇吃完了"
    cut = cut_medicine(text, span(text, "王建国钙尔奇"))
    assert cut is not None and cut.text == "王建国"


def test_an_employer_named_after_its_medicine_stays_whole() -> None:
    text = "我在云南白药集团上班"
    org = span(text, "云南白药集团", kind=EntityType.ORG, source="organization")
    assert cut_medicine(text, org) is org
    alone = "云南白药喷了两天"
    assert cut_medicine(alone, span(alone, "云南白药", kind=EntityType.ORG)) is None


def test_structured_identifiers_and_places_are_never_cut() -> None:
    text = "住在白加路3号"
    place = span(text, "白加路3号", kind=EntityType.ADDRESS, source="address")
    assert cut_medicine(text, place) is place
    assert veto_class(text, place) is None


async def test_the_llm_pass_proposals_go_through_the_vetoes() -> None:
    turns = ["嗓子疼，金嗓子含着有用吗"]
    reply = {"spans": [{"turn": 0, "text": "金嗓", "type": "NAME"}]}
    with FakeOpenAIServer() as server:
        server.script(FakeReply(content=json.dumps(reply, ensure_ascii=False)))
        client = OpenAICompatibleClient(
            "fake-model", base_url=server.base_url, api_key="k", max_attempts=1, timeout_s=10
        )
        outcome = await deid_turns(turns, client)
    assert outcome.llm_ok is True
    assert outcome.masked == turns


@pytest.mark.parametrize("kind", list(EntityType))
def test_a_class_skipped_for_a_type_never_drops_that_type(kind: EntityType) -> None:
    """``veto_class`` tries a span only against the classes its type can fall in: every other
    class answers no for it, whatever the text around (a code label, a maker, a drug)."""
    tried = {name for name, _ in _BY_TYPE[kind]}
    texts = ["国药准字欧姆龙HEM-7136俺娘片盐酸那敏按时吃", "批号A123 张伟 吃完一周 氯苯那敏胶囊"]
    for text in texts:
        for start in range(len(text) - 1):
            for end in range(start + 1, min(len(text), start + 6) + 1):
                span = Span(start=start, end=end, type=kind, text=text[start:end], source="llm")
                for name, veto in VETOES:
                    if name not in tried:
                        assert not veto(text, span), (name, kind, text[start:end])
