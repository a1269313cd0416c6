"""Name kinds found by position rather than by a list (examples written here): full names no
dictionary knows after a role word or before a speech verb, names standing alone as a clause,
chained @handles, doubled pet names and doubled given names, names after a word for "name",
Latin names before a title; and the ordinary and clinical words in the same positions, which
must stay unmasked."""

from __future__ import annotations

import pytest

from medrealmm.deid import ner
from medrealmm.deid.registry import rules_registry
from medrealmm.deid.story_names import story_names
from medrealmm.deid.text import find_spans
from medrealmm.deid.unlisted_names import (
    UnlistedFullNameRecognizer,
    foreign_after_role,
    surname_before_place,
)


def _masked(text: str) -> set[str]:
    return {s.text for s in find_spans(text, rules_registry())}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # a role word before an unseen full name, a report verb after it
        ("街道办主任滕嘉朔透露，已联系家属", "滕嘉朔"),
        ("导演蒲奕辰执导的新片下周上映", "蒲奕辰"),
        ("，祁沐阳说他明天不来了", "祁沐阳"),
        ("昨天跟詹若溪说了这件事", "詹若溪"),
        # a surname that is often a word (仲, 师) with a break before and a verb after
        ("#新片速递#仲思远执导的电影", "仲思远"),
        # a full name standing alone as a clause (a post's signature)
        ("今天降温了。邝思妤", "邝思妤"),
        # a surname with a doubled given character
        ("我刚才碰到了柯芊芊在楼下", "柯芊芊"),
        # the value after a word for "name"
        ("他外号大圆脸，人很好", "大圆脸"),
        ("一部动画里有个名叫朵卡拉的机器人", "朵卡拉"),
        ("我同桌外号小圆脸经常迟到", "小圆脸"),  # run on into the next clause
        # the one named, before a word for a nickname
        ("听说彤彤外号叫小辣椒", "彤彤"),
        ("原来俊熙网名叫小熊", "俊熙"),
        # transliterated names with a dot of any shape, a full stop included
        ("听说约翰‧史密斯明天来", "约翰‧史密斯"),
        ("她最喜欢的作家是玛丽．安德森", "玛丽．安德森"),
        # a given name with an affectionate suffix and no surname
        ("明天见啦，晚安芷柔君", "芷柔"),
        ("谢谢出纳俊豪兄弟，帮了大忙", "俊豪"),  # not 豪 + the kinship word 兄弟
        # a Latin given name before a title
        ("昨天mandy老师布置了作业", "mandy"),
        # a nickname of 小 and a Latin letter after a cue
        ("大家好，我是小K，负责客服", "小K"),
        # doubled pet names beside what only a person does
        ("刚才看卷卷的手好像肿了", "卷卷"),
        ("我们跟豚豚说了", "豚豚"),
        # a doubled name on a form, spaces after it (the doubled-word veto wants Han)
        ("缴款人：莎莎  年龄 40岁", "莎莎"),
        # a full name run on after a word or a particle, with no break before it
        ("周末一起去爬山吧邝思妤", "邝思妤"),
        ("新年快乐呀滕嘉朔爱你", "滕嘉朔"),
        # a tilde of another shape breaks a clause
        ("好冷〜詹若溪说", "詹若溪"),
        # a bare given name spoken to, and a couple joined by 和
        ("我对芷柔说过了", "芷柔"),
        ("听说沐晴和俊熙在一起了", "沐晴"),
        ("听说沐晴和俊熙在一起了", "俊熙"),
        ("没想到朵朵和阿哲结婚了", "朵朵"),
        # a name-ending character (天, 月, 家) inside the given part of a standalone name
        ("周末去看海了。晚安啦萧天朗", "萧天朗"),
        ("，邝月琪，", "邝月琪"),
        # a lower-case Latin name as the subject of a speech verb
        ("昨晚momo表示不想去了", "momo"),
        # a transliterated foreign name with no dot after a role word
        ("据作家莫里森回忆，那年冬天很冷", "莫里森"),
        ("下周想跟桑德拉见一面", "桑德拉"),
    ],
)
def test_name_kinds_are_masked(text: str, value: str) -> None:
    assert value in _masked(text)


def test_chained_handles_are_accounts_not_email_hosts() -> None:
    spans = {s.text for s in find_spans("@青柠汽水77@鹿野晴_2@mocha猫", rules_registry())}
    assert {"青柠汽水77", "鹿野晴_2", "mocha猫"} <= spans
    # an e-mail's host is no handle
    email = find_spans("发到lily@163.com就行", rules_registry())
    assert [s.text for s in email] == ["lily@163.com"]


@pytest.mark.parametrize(
    "text",
    [
        "主任查房时说血压偏高",  # a role word before an ordinary word
        "对方说可以改天再约",  # 对 + 方 is one word
        "陈述病史。",  # a surname heading an ordinary word, alone as a clause
        "金灿灿的小米粥很香",  # a colour word doubled, not 金 + a given name
        "林林总总的检查做了不少",  # a word doubled pair by pair
        "ICU护士说今晚要观察",  # an abbreviation before a title
        "医生透露病情稳定",  # 透露 is no dosage form, nor a name
        "大大的肿块，慢慢的变小",  # doubled adjectives and adverbs
        "吃了黄连素片，每次两片",  # a medicine alone as a clause
        "高血压。",  # a disease alone as a clause
        "吃了布洛芬.然后睡了",  # a full stop between a medicine and a sentence
        "今天还好.明天复查",  # a full stop between sentences
        "在座诸君请注意",  # 诸君 is a word, not a given name
        "，安静说话，别吵",  # an ambiguous surname heading an ordinary word before a verb
        "，时间表示不清楚",  # …and another
        "阿胶和黄精能一起吃吗",  # a medicine after an address word (和…能一起吃)
        "孜然粉和花椒粉少放点",  # a powder, whatever its first character
        "周末一起去爬山吧黄芪茶",  # a drink run on after a word: an ordinary word inside
        "新年快乐呀高血压",  # a disease run on after a particle
        "我对妈妈说过了",  # a kin word spoken to
        "跟大家说一声",  # a pronoun-like word spoken to
        "看到他和别人在一起",  # a pronoun in a couple, a word across its edge
        "想和家人在一起",  # an ordinary word in a couple
        "请先看app说明书",  # Latin letters before 说明, a word, not a speech verb
        "关心朋友都力不从心",  # function characters after a role word
        "记者马上到现场",  # an ordinary word after a role word
        "他下个月和巴基斯坦的客户谈",  # a place written in the same syllables
        "他的网名很好听",  # a word for "name" before an ordinary clause
        "我给他取个外号吧",  # a verb and a measure word before the word for "name"
        "同学绰号都很怪",  # an ordinary word before it
        "昵称改成了豆豆吧",  # …before a verb
        "，王天气不错，",  # 天 inside a standalone run, but 天气 is an ordinary word
        "今天周末吧张天天加班",  # no break after the run: 天 still ends a name there
    ],
)
def test_same_positions_keep_ordinary_and_clinical_words(text: str) -> None:
    assert not _masked(text), _masked(text)


@pytest.mark.parametrize(
    ("text", "start", "end", "kept"),
    [
        # the model's span is a given name and left its surname outside (a rare one too)
        ("转发给邝若彤看看", 4, 6, "邝若彤"),
        ("我们班的曾婉琪也来了", 5, 7, "曾婉琪"),
        # a function-word surname (和), a surname ending a word before it (感谢), or a span
        # that starts with a surname of its own: the span stays as the model gave it
        ("我和若彤去了", 2, 4, "若彤"),
        ("感谢若彤帮忙", 2, 4, "若彤"),
        ("小王李明来了", 2, 4, "李明"),
    ],
)
def test_a_surname_left_outside_the_models_span_is_taken_back(
    text: str, start: int, end: int, kept: str
) -> None:
    span = ner._name_span(text, start, end)
    assert span is not None and text[span[0] : span[1]] == kept


def test_a_nickname_of_xiao_and_one_character_is_no_drug_syllable() -> None:
    # 平 and 辛 end drug names (氨氯地平), but no drug starts with 小 or 阿
    assert ner._name_span("当年小平的决定", 2, 4) == (2, 4)
    assert ner._name_span("阿辛来了", 0, 2) == (0, 2)
    assert ner._name_span("吃了硝苯地平", 2, 6) is None


def test_a_one_character_name_recurring_in_a_story_is_masked_at_each_bare_mention() -> None:
    text = "芸讨厌琪，因为她觉得琪抢走了她的位置，芸常常说琪的坏话，可是大家都选琪。"
    spans = [s for s in find_spans(text, [ner.LacNerRecognizer()]) if s.text == "琪"]
    assert [s.start for s in spans] == [i for i, c in enumerate(text) if c == "琪"]


@pytest.mark.parametrize(
    "text",
    [
        "琪说好。",  # one mention: a character alone is as often a word
        "[怒][怒][怒]怒了",  # emoji codes, not mentions
        "花园里花开了，花很香，花",  # a verb (花钱), and in words (花园, 花开) elsewhere
    ],
)
def test_a_one_character_person_needs_three_bare_mentions(text: str) -> None:
    tagged = [text.index(text.strip("[")[0])]
    assert not list(story_names(text, tagged, "test"))


def test_the_models_person_over_a_doubled_pet_name_stays() -> None:
    # 乐乐 and 晶晶 are dictionary words too, but a doubled pair the model calls a person is
    # a pet name; doubled interjections, kin words, status words and places are not
    assert ner._name_span("乐乐", 0, 2) == (0, 2)
    assert "晶晶" in {s.text for s in find_spans("今天带晶晶去公园玩", [ner.LacNerRecognizer()])}
    for word in ("哈哈", "妈妈", "讷讷", "常常"):
        assert ner._name_span(word, 0, 2) is None, word


def test_the_models_person_over_a_dictionary_shorthand_stays() -> None:
    # 鲁比 (a transliteration the dictionary lists as an abbreviation) and 拼命三郎 (a set
    # phrase) are known words, but the model's person over them is a star's short name or
    # an epithet; over a plain noun, or a clinical abbreviation (彩超, 镜检), it is the word
    assert ner._name_span("今晚鲁比又进了两个球", 2, 4) == (2, 4)
    assert ner._name_span("拼命三郎又来了", 0, 4) == (0, 4)
    for text in ("做了彩超", "做了镜检", "做了手术"):
        assert ner._name_span(text, 2, 4) is None, text


def test_a_surname_before_the_models_two_character_place_at_a_clause_start_is_a_name() -> None:
    # given names are often place words (天山, 海南): the model may read the given part as a
    # place, but a leading surname before it at a clause start makes the three one person
    assert surname_before_place("好开心～程天山今天来了", 5, 7) == 4
    assert surname_before_place("，宋海南哈哈哈", 2, 4) == 1
    assert "程天山" in {
        s.text for s in find_spans("好开心～程天山今天来了", [ner.LacNerRecognizer()])
    }


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("好开心～程天山路有家店", 5, 7),  # a place's ending after it: the place
        ("我去过程天山", 4, 6),  # no clause start before the surname: a place after a verb
        ("，高山流水", 2, 4),  # the surname heads an ordinary word
    ],
)
def test_a_place_with_no_surname_at_a_clause_start_before_it_stays_a_place(
    text: str, start: int, end: int
) -> None:
    assert surname_before_place(text, start, end) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("好热啊。。小小芽子童鞋转发了", "小小芽子"),  # 小 and three characters before 童鞋
        ("哈哈阿呆瓜君你好", "阿呆瓜"),  # 阿 and two, run on after a particle
    ],
)
def test_a_longer_nickname_before_an_affectionate_suffix_is_masked(text: str, value: str) -> None:
    assert value in _masked(text)


@pytest.mark.parametrize(
    ("text", "word"),
    [("。小伙伴童鞋们好", "小伙伴"), ("今天小朋友君来了", "小朋友"), ("大小便君", "小便")],
)
def test_an_ordinary_word_before_an_affectionate_suffix_stays(text: str, word: str) -> None:
    assert not any(word[:2] in value for value in _masked(text))


def test_a_doubled_pet_name_spoken_to_is_masked_whatever_stands_before_it() -> None:
    # a pair no dictionary knows, with what is said to a person after it (你是我…, 生日快乐)
    assert "苒苒" in _masked("唱得真好听那个苒苒你是我偶像")
    assert "芃芃" in _masked("今天吃蛋糕芃芃生日快乐")


@pytest.mark.parametrize("text", ["谢谢你是我的朋友", "常常你是我", "天天你最棒", "好好你最棒"])
def test_a_doubled_word_spoken_to_stays(text: str) -> None:
    assert not _masked(text)


def test_a_latin_performer_name_before_a_fans_words_is_masked() -> None:
    assert "KOI" in _masked("下个月KOI演唱会，内场两张")
    assert "Ryla" in _masked("送一张Ryla签名照")
    assert not _masked("这是test@KOI演唱会")  # inside an address or handle it stays theirs


@pytest.mark.parametrize(
    ("text", "start", "end", "kept"),
    [
        ("挂完号了〜向雅琳来了", 6, 8, "向雅琳"),  # a wordlike surname where a clause starts
        ("#万雨菲#加油", 2, 4, "万雨菲"),
        ("我们向雅琳学习", 3, 5, "雅琳"),  # after a word: the preposition
        ("，和思远去了", 2, 4, "思远"),  # a conjunction even at a clause start
    ],
)
def test_a_wordlike_surname_is_taken_back_only_where_a_clause_starts(
    text: str, start: int, end: int, kept: str
) -> None:
    span = ner._name_span(text, start, end)
    assert span is not None and text[span[0] : span[1]] == kept


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # one introducing themself, the word after the name starting a clause of its own
        ("我叫韩人意好开心啊", "韩人意"),
        ("我叫邵福来哈哈好开心呀", "邵福来"),  # a laugh after it
        ("我叫夏如梦经典日记", "夏如梦"),  # 如, as in 如果
        ("我是韩人意，今年三十", "韩人意"),
        # what a person owns after it
        ("看到韩人意的博文很受启发", "韩人意"),
        ("那只小狗是我柯待桥家的", "柯待桥"),
        # the subject of what is thought of
        ("我怀疑韩人意早就知道这件事", "韩人意"),
        # after a cue of the rules: a relative, a patient
        ("家属邵福来要求出院", "邵福来"),
        ("我妈柯天池最近血压高", "柯天池"),
    ],
)
def test_a_name_ending_character_inside_a_full_name_in_a_persons_frame(
    text: str, name: str
) -> None:
    """人 and 来 end a name in running text, yet stand inside given names (人意, 福来): a
    person's frame around the full name, and a word starting after it, let them in."""
    assert name in _masked(text)


@pytest.mark.parametrize(
    "text",
    [
        "我叫了外卖",
        "看到人来人往",
        "我是周末来的",  # 周末 is a word, not 周 + a given name
        "听说黄天来了",  # two name-ending characters: 黄天 came
        "我觉得韩人平时很好",  # 平时 runs across the name's end
        "我还以为高高挖坑了",  # a verb as the last given character
        "我是刘家人",
        "患者周一来复查",  # 周一 is a word
        "家属陈天来了",
        "我妈李刚才说了",  # 刚才, two of them
    ],
)
def test_a_persons_frame_lets_in_no_word_or_two_name_ending_characters(text: str) -> None:
    assert not _masked(text)


def test_a_transliterated_name_after_a_role_ends_before_a_laugh() -> None:
    """哈 is a syllable of foreign names (哈里斯), but doubled it is a laugh after the name."""
    assert [s.text for s in foreign_after_role("诗人萨莫尼卡哈哈哈")] == ["萨莫尼卡"]
    assert [s.text for s in foreign_after_role("跟哈里斯说好了")] == ["哈里斯"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("哈哈池洋姐姐唱得真好", "池洋"),
        ("昨天见到韩冬梅姐姐了", "韩冬梅"),
        ("谢谢柏思远哥哥的礼物", "柏思远"),
        ("这次多亏了邝一鸣大哥", "邝一鸣"),
    ],
)
def test_a_full_name_before_a_kinship_address_is_masked(text: str, value: str) -> None:
    assert value in _masked(text)


@pytest.mark.parametrize(
    "text",
    [
        "温柔姐姐说得对",  # an adjective before the address word
        "师姐说明天考试",  # a dictionary word for a fellow student
        "王姐姐你好",  # a surname alone: no full name before the word
    ],
)
def test_words_before_a_kinship_address_stay(text: str) -> None:
    assert _masked(text) == set()


def test_a_cue_that_is_one_word_with_the_surname_cues_nothing() -> None:
    """祝|贺 is 祝贺 (a word jieba also lists as a name): 贺 starts no name after 祝."""
    assert list(UnlistedFullNameRecognizer().find("祝贺宁静远获得冠军")) == []
    assert [s.text for s in UnlistedFullNameRecognizer().find("感谢冉一舟的帮助")] == ["冉一舟"]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("邝一鸣您好，您的报告出来了", ["邝一鸣"]),
        ("，滕嘉朔你好！", ["滕嘉朔"]),
        ("师傅您好", []),  # a word for a tradesman, greeted
        ("黄金你好", []),  # a dictionary word
    ],
)
def test_a_full_name_greeted_is_masked(text: str, found: list[str]) -> None:
    assert sorted(_masked(text)) == found


def test_a_type_or_grade_after_a_latin_name_is_no_generation() -> None:
    # II型 is the diabetes' type, not John Smith II
    assert _masked("患者John Smith II型糖尿病十年") == {"John Smith"}
    assert _masked("我叫John Smith III，失眠") == {"John Smith III"}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # a compound surname that is also a word (东方, 南宫, 独孤), after a cue or greeted
        ("病人东方若岚，男，60岁", "东方若岚"),
        ("南宫霁川您好，复查结果正常", "南宫霁川"),
        ("独孤晓你好，药已经寄出", "独孤晓"),
        ("司马晓您好，请按时复诊", "司马晓"),  # 您 ends the name
        # a rarer surname greeted where a clause starts
        ("检查做完了。蓟远您好，报告在这里", "蓟远"),
    ],
)
def test_a_wordlike_compound_surname_after_a_cue_or_greeted_is_a_name(
    text: str, value: str
) -> None:
    assert value in _masked(text)


@pytest.mark.parametrize(
    "text",
    [
        "患者东方人，体型偏瘦",
        "东方您好",
        "，百里挑一您好",
        # a place, a time or a school year greeted: dictionary words, whatever their tag
        "南京你好",
        "明天你好",
        "高三你好",
        "柏林你好",
    ],
)
def test_a_wordlike_compound_alone_stays(text: str) -> None:
    assert not _masked(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # a name that is an ordinary word, in a frame that leaves it no other reading
        ("我叫安康，头疼两天", "安康"),
        ("医生您好，我是向荣的家属", "向荣"),
    ],
)
def test_a_word_named_as_a_person_is_a_name(text: str, value: str) -> None:
    assert value in _masked(text)


@pytest.mark.parametrize(
    "text", ["我叫明天，", "我叫黄连，", "我是患者的家属", "我是周一的家属", "我叫许多，"]
)
def test_a_time_a_medicine_or_a_function_word_in_those_frames_stays(text: str) -> None:
    assert not _masked(text)


def test_a_side_a_body_part_and_its_symptom_is_no_name() -> None:
    from medrealmm.deid.text import find_spans

    assert find_spans("拔完牙以后现在右膝肿，还要吃药吗") == []
