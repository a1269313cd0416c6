"""Open-class names and organisations (examples written here): nicknames after any cue,
pet names, names asked about on someone's behalf, minority names with and without a dot,
employers and schools; and the classes vetoed as no name (drugs, body parts, blood types,
dialect pronouns, insurance words), which must stay unmasked."""

from __future__ import annotations

import pytest

from medrealmm.deid.organizations import _named_kind
from medrealmm.deid.registry import rules_registry
from medrealmm.deid.spans import EntityType
from medrealmm.deid.text import find_spans


def _masked(text: str) -> dict[str, EntityType]:
    return {s.text: s.type for s in find_spans(text, rules_registry())}


def _all(text: str) -> dict[str, EntityType]:
    return {s.text: s.type for s in find_spans(text)}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("您好，我是小郑，上回问过湿疹的事", "小郑"),
        ("老覃叫我来问一下降压药", "老覃"),
        ("阿彬说他头晕好几天了", "阿彬"),
        ("咱家朵朵这两天不爱吃饭", "朵朵"),
        ("我家宝宝糖糖3岁了", "糖糖"),
        ("帮邵明轩挂个号，他发烧了", "邵明轩"),
        ("替龚雪梅问一下，她一直失眠", "龚雪梅"),
        ("就诊人信息：韦家豪，男", "韦家豪"),
        ("我同事巴特尔，胃疼两天", "巴特尔"),
        ("我朋友格桑卓玛，高原反应很重", "格桑卓玛"),
        ("联系人热合曼·阿不都克力木，电话另发", "热合曼·阿不都克力木"),
        ("帕提古丽·吐尔逊上周开始咳嗽", "帕提古丽·吐尔逊"),
        ("他们都说壮壮瘦了", "壮壮"),
        ("谢谢兔兔，也谢谢大家", "兔兔"),
    ],
)
def test_open_class_names(text: str, value: str) -> None:
    assert _masked(text).get(value) is EntityType.NAME


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("我是熊猫血，怀孕要注意什么", "熊猫血"),
        ("右耳后面长了个包，左耳也有点痛", "左耳"),
        ("俺娘说吃了不管用", "俺娘"),
        ("医保能报销吗？商保呢", "医保"),
        ("每次2粒，一日三次", "每次"),
        ("我叫他明天再来，今天太晚了", "明天"),
        ("我家孩子慢慢好了", "慢慢"),
        ("帕提古丽·吐尔逊昨天开始咳嗽", "昨天"),
        ("说慢慢来，痒痒的，天天吃药", "慢慢"),
        ("腿上痒痒的，晚上更厉害", "痒痒"),
        ("处方为艾司西酞普兰，坦索罗辛促排石", "罗辛"),
        ("我大哥说他头疼，空姐也这样", "大哥"),
    ],
)
def test_what_is_no_name_stays(text: str, kept: str) -> None:
    masked = _all(text)
    assert all(kept not in value for value in masked if masked[value] is EntityType.NAME)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("开了杜密克，一次一袋", "杜密克"),
        ("司美格鲁肽还要继续打吗", "司美格鲁肽"),
        ("曲安奈德刚用过，还痒", "曲安奈德"),
        ("吃了汤臣倍健和白加黑，还是没睡好", "白加黑"),
    ],
)
def test_transliterated_drug_names_are_no_names(text: str, value: str) -> None:
    assert not any(
        value in s or s in value for s, kind in _all(text).items() if kind is EntityType.NAME
    )


def test_an_at_handle_is_an_account_unless_it_is_a_name() -> None:
    masked = _masked("谢谢@小鹿爱吃草 和 @cindy_2019，也谢谢@陈思远")
    assert masked["小鹿爱吃草"] is EntityType.ID
    # the handle recognizer takes it with its @: any ID span holding it will do
    assert any("cindy_2019" in text and kind is EntityType.ID for text, kind in masked.items())
    assert masked["陈思远"] is EntityType.NAME
    assert _masked("邮箱 li@b.com") == {"li@b.com": EntityType.EMAIL}  # no handle inside


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("我在富士康上班，天天站着", "富士康"),
        ("老公在中兴通讯股份有限公司工作", "中兴通讯股份有限公司"),
        ("工作单位：宏远建材，需要开证明", "宏远建材"),
        ("在农业银行城西支行上班", "农业银行城西支行"),
        ("孩子在实验二小读三年级", "实验二小"),
        ("女儿就读于春蕾幼儿园", "春蕾幼儿园"),
        ("他是复旦大学的老师", "复旦大学"),
        ("我在市三中教书", "市三中"),
    ],
)
def test_employers_and_schools_are_organisations(text: str, value: str) -> None:
    assert _masked(text).get(value) is EntityType.ORG


@pytest.mark.parametrize(
    "text",
    [
        "在一家保险公司上班，压力大",
        "我是大学生，小学生也能吃吗",
        "在工地上班，腰疼",
        "我在深圳上班",
        "银行卡丢了，医保卡还在",
        "在我们公司体检查出来的",
        "去超市买了点水果",
        "上大学以后就开始失眠",
        "在我们公司上班，我在本地工作",  # a pronoun or a common word holds the 我 or 本
        "在一家（外资）公司上班",  # a kind in brackets names no one
        "我在跟同事上班，我在和他公司上班",  # a function character before no organisation word
    ],
)
def test_kinds_of_organisation_and_ordinary_words_stay(text: str) -> None:
    assert EntityType.ORG not in _masked(text).values()


def test_a_hospital_inside_a_university_name_stays_one_hospital() -> None:
    masked = _masked("在四川大学华西医院做的手术")
    assert masked.get("四川大学华西医院") is EntityType.HOSPITAL
    assert EntityType.ORG not in masked.values()


def test_a_friend_called_by_one_character_and_brother_is_masked_by_the_model() -> None:
    masked = _all("打算去店里找舟哥，刚坐上车")
    assert masked.get("舟") is EntityType.NAME


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Dear Zhang Wei, your report is ready", "Zhang Wei"),
        ("患者 Wei ZHANG 复诊", "Wei ZHANG"),
        ("LI Xiaoming 的化验单", "LI Xiaoming"),
        ("Chan Tai-man 先生来电", "Chan Tai-man"),
        ("陳志明醫生說要覆診", "陳志明"),
    ],
)
def test_romanised_and_traditional_names(text: str, value: str) -> None:
    assert _masked(text).get(value) is EntityType.NAME


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("刘总让我来问问", "刘"),
        ("王经理说的那个药", "王"),
        ("請問林護士長在嗎", "林"),
        ("我和王医生说了", "王"),
        ("向李主任请教过", "李"),
    ],
)
def test_a_surname_before_a_work_or_traditional_title(text: str, value: str) -> None:
    assert _masked(text).get(value) is EntityType.NAME


@pytest.mark.parametrize(
    "text", ["ALT AST 正常", "He said the CT was fine", "CRP HGB WBC 都查了", "孩子总是哭"]
)
def test_codes_english_and_adverbs_are_no_names(text: str) -> None:
    assert EntityType.NAME not in _masked(text).values()


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("#向雨菲#早日康复", "向雨菲"),  # a wordlike surname, but the hashtag is the name
        ("回复谢秋云亲，药要饭后吃", "谢秋云"),  # a reply's addressee
    ],
)
def test_a_rare_surname_filling_a_hashtag_and_a_reply_addressee(text: str, name: str) -> None:
    assert _masked(text).get(name) is EntityType.NAME


@pytest.mark.parametrize("text", ["#向日葵#好看", "#时尚圈#开幕了", "回复时间太长了"])
def test_words_in_a_hashtag_or_after_a_reply_stay(text: str) -> None:
    assert not [v for v, t in _masked(text).items() if t is EntityType.NAME]


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("打针没哭甜甜你是我的小英雄", True),  # 甜甜/a: a doubled adjective spoken to
        ("打针都没哭的豆豆你最棒", True),  # 豆豆/n
        ("谢谢你是我的好朋友", False),  # 谢谢: a verb
        ("好好你最棒", False),  # 好好: an adverb
    ],
)
def test_a_doubled_noun_or_adjective_spoken_to_is_a_pet_name(text: str, masked: bool) -> None:
    names = [v for v, t in _masked(text).items() if t is EntityType.NAME]
    assert bool(names) is masked


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("复查结果出来啦周海波说没事", "周海波"),  # 海波/n: a noun given name before a verb
        ("挂号单上写着：孙建军", "孙建军"),  # 建军/n, closed by the text's end
    ],
)
def test_a_noun_given_name_closed_by_a_break_or_verb(text: str, name: str) -> None:
    assert _masked(text).get(name) is EntityType.NAME


@pytest.mark.parametrize("text", ["烧退了[哈哈熊鬼脸]谢谢医生", "护士送的黄花束很好看"])
def test_emoji_codes_and_nouns_run_on_mid_clause_stay(text: str) -> None:
    """An emoji code is no name; a noun after a surname mid-clause (黄花束, no break or verb
    after it) needs more than its shape."""
    assert not [v for v, t in _masked(text).items() if t is EntityType.NAME]


@pytest.mark.parametrize("text", ["祝朋友生日快乐！", "祝公司生日快乐", "祝大家新年快乐，加油！"])
def test_a_wish_to_an_everyday_noun_is_no_surname_and_noun_given_name(text: str) -> None:
    """祝 is a surname, but before an everyday noun (朋友, 公司) it is the verb of a wish."""
    assert not [v for v, t in _masked(text).items() if t is EntityType.NAME]


@pytest.mark.parametrize("text", ["祝钱包生日快乐！", "#胡萝卜#今天"])
def test_a_noun_after_an_address_surname_or_an_everyday_noun_stays(text: str) -> None:
    """祝 before a noun is the wish; 萝卜 is counted too often to be a given name."""
    assert not [v for v, t in _masked(text).items() if t is EntityType.NAME]


def test_a_dictionary_noun_of_a_name_and_a_kind_of_business_is_a_company() -> None:
    # the dictionary lists some makers as plain nouns (a name, then 汽车 or 机械)
    assert _named_kind("红星机械") and _named_kind("东岭汽车")
    assert not _named_kind("大型汽车") and not _named_kind("汽车")


def test_a_universitys_department_is_no_ordinary_word_after_it() -> None:
    assert _masked("我在南湖大学化学系读书").get("南湖大学化学系") is EntityType.ORG
    assert "南湖大学" in _masked("跟南湖大学关系很好")  # 关系 is no department
