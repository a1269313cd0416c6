"""The cheap checks put in front of costly scans for speed change no match.

Each gated pattern is compared with the same pattern without its gate on random strings
drawn from the characters the patterns care about, so a later edit that lets a match start
where the gate does not look fails here.
"""

from __future__ import annotations

import random
import re

import pytest

from medrealmm.deid import latin_names, names, organizations, unlisted_names
from medrealmm.deid.recognizer import gated
from medrealmm.deid.recognizers import addresses, dates, institutions, phones, records

_ALPHABET = (
    "省市区县旗街道镇乡村屯嘎查组队社号院弄栋幢座单元楼层室大厦小区花园家园公寓新苑胡同路巷"
    "一二三四五六七八九十〇零幺0123456789 \t\n　()（）+-./:：@"
    "的在我去家住张王李和时全单于欧阳司马上官阿小老医生主任护士姓名患者病人叫是订单病历身份证"
    "年月日吃了服用药品名称继续西塘朝阳海淀ABxy电话手机座总联系热来回拨打致码TelPhonMbCa"
)


def _texts(count: int = 3000, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(_ALPHABET, k=rng.randint(1, 40))) for _ in range(count)]


def _without(pattern: re.Pattern[str], gate: str) -> re.Pattern[str]:
    assert pattern.pattern.startswith(gate)
    return re.compile(pattern.pattern[len(gate) :], pattern.flags)


def _non_empty(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], dict]]:
    return [(m.span(), m.groupdict()) for m in pattern.finditer(text) if m.end() > m.start()]


@pytest.mark.parametrize(
    ("pattern", "gate"),
    [
        (addresses._ADDRESS_RE, addresses._ADDRESS_START),
        (phones._PHONE_SHAPE_RE, phones._PHONE_START),
        (phones.PHONE_IN_ANY_LAYOUT.patterns[0], phones._PHONE_CUE_FIRST),
        (phones.PHONE_IN_ANY_LAYOUT.gate, phones._PHONE_CUE_FIRST),
        (phones.PHONE_BY_CONTEXT.gate, phones._PHONE_CUE_FIRST),
        *[(p, dates._DIGIT_FIRST) for p in dates.FULL_DATE.patterns],
    ],
)
def test_a_gate_in_front_of_a_pattern_changes_no_match(pattern: re.Pattern[str], gate: str) -> None:
    plain = _without(pattern, gate)
    for text in _texts():
        assert _non_empty(pattern, text) == _non_empty(plain, text), text


def test_word_start_gates_change_no_match() -> None:
    for pattern in (
        names._BEFORE_RE,
        names._LABEL_RE,
        names._AFTER_RE,
        names._SURNAME_CHAR_RE,
        records._KEYWORD_RE,
    ):
        gate = pattern.pattern[: pattern.pattern.index("])") + 2]
        plain = _without(pattern, gate)
        for text in _texts(1000):
            assert _non_empty(pattern, text) == _non_empty(plain, text), text


def test_the_unlisted_name_candidates_keep_every_start_behind_their_first_characters() -> None:
    """Its matches are empty (a lookahead, so every start is tried): compare the names."""
    pattern = unlisted_names._CANDIDATE_RE
    plain = _without(pattern, pattern.pattern[: pattern.pattern.index("])") + 2])
    for text in _texts(1000):
        expected = [(m.span(), m.group("name")) for m in plain.finditer(text)]
        assert [(m.span(), m.group("name")) for m in pattern.finditer(text)] == expected, text


# The anchors' words and their neighbours: institution suffixes, unit words, record labels.
_ANCHOR_ALPHABET = (
    "医院诊所卫生门部口腔保健务室齿科服站中心疗体检学康复急救管理透析影像妇幼醫診衛門齒體婦"
    "区县旗镇乡路街巷弄苑村屯组号胡同小花园家公寓大厦新证历单卡码账编型院区市省的我在 12"
)


@pytest.mark.parametrize(
    ("pattern", "gate"),
    [
        (addresses.ADDRESS.anchor, addresses.ADDRESS_ANCHOR_FIRST),
        (institutions.HOSPITAL.anchor, institutions._SUFFIX_FIRST),
    ],
)
def test_a_gate_in_front_of_an_anchor_changes_no_match(pattern: re.Pattern[str], gate: str) -> None:
    plain = _without(pattern, gate)
    rng = random.Random(5)
    for _ in range(3000):
        text = "".join(rng.choices(_ANCHOR_ALPHABET, k=rng.randint(1, 30)))
        assert _non_empty(pattern, text) == _non_empty(plain, text), text


def test_taking_verb_search_near_the_candidate_equals_one_from_the_start() -> None:
    for text in _texts():
        for start in range(len(text) + 1):
            expected = names._TAKING_BEFORE.search(text, 0, start) is not None
            assert names._taken_before(text, start) == expected, (text, start)


# The name scans' gates and the words their patterns need, with doubled and Latin letters.
_NAME_ALPHABET = (
    "我叫是患者家属老公女儿朋友医生主任老师先生小老阿张王李欧阳司马伟芳乐乐晶晶和与跟在一起结婚"
    "君酱童鞋兄弟说表示告诉中小一二三学AbcLilyTomWangFang ，。、：:"
)


@pytest.mark.parametrize(
    ("gate", "pattern"),
    [
        (names._CUE_GATE, names._BEFORE_RE),
        (names._CUE_GATE, names._LATIN_BEFORE_RE),
        (names._CUE_GATE, names._LONG_AFTER_CUE_RE),
        (names._TITLE_GATE, names._AFTER_RE),
        (names._NICK_GATE, names._NICK_RE),
        (names._NICK_GATE, names._NICK_AFTER_CLOSE_RE),
        (names.DOUBLED_GATE, names._DOUBLED_RE),
        (names.DOUBLED_GATE, names._DOUBLED_ANYWHERE_RE),
        (names.DOUBLED_GATE, unlisted_names._DOUBLED_GIVEN_RE),
        (unlisted_names._SUFFIX_GATE, unlisted_names._SUFFIXED_RE),
        (unlisted_names._COUPLE_GATE, unlisted_names._COUPLE_RE),
        (unlisted_names._LATIN_GATE, unlisted_names._LATIN_TITLED_RE),
        (unlisted_names._LATIN_GATE, unlisted_names._LATIN_SPEAKS_RE),
        (latin_names._CAPITAL, latin_names._PAIR),
        (organizations._SCHOOL_GATE, organizations._ORDINAL_SCHOOL),
    ],
)
def test_a_text_a_name_gate_refuses_has_no_match(
    gate: re.Pattern[str], pattern: re.Pattern[str]
) -> None:
    rng = random.Random(13)
    for _ in range(3000):
        text = "".join(rng.choices(_NAME_ALPHABET, k=rng.randint(1, 30)))
        assert gate.search(text) or not _non_empty(pattern, text), text
        assert [m.span() for m in gated(gate, pattern, text)] == [
            m.span() for m in pattern.finditer(text) if gate.search(text)
        ]
