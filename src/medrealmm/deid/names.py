"""Personal names: surname-led candidates confirmed by context cues or by jieba's ``nr`` tag.

Cheap checks come first so the statistical tagger runs only where a name is plausible: a
surname character that does not start (or end) an ordinary dictionary word. That keeps the
rule path fast and stops words like 两周, 高热 or 谢谢 from turning into names.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from medrealmm.deid.registry import register
from medrealmm.deid.spans import EntityType, Span, words

SINGLE_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝"
    "龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞"
    "左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕"
    "屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧"
    "闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝"
)
COMPOUND_SURNAMES = words(
    "欧阳 司马 上官 诸葛 东方 皇甫 令狐 慕容 尉迟 公孙 夏侯 司徒 端木 长孙 宇文 轩辕 澹台 南宫"
)
SURNAME_RE = "(?:" + "|".join(COMPOUND_SURNAMES) + f"|[{SINGLE_SURNAMES}])"
# Characters that do not occur in given names but do follow names in running text.
NAME_STOP = set(
    "的了是在和与及就也都还又说今年岁男女我你他她它们这那有没不很太请问谢医生患者病人住家从到去来"
    "吗呢吧啊呀哦嗯给让被把对向跟叫做看开吃用打已经刚才因为所以但是如果最近前后天月日号周时点分"
)
_CJK = "\u4e00-\u9fff"
_GIVEN = f"[{_CJK}]"

BEFORE_CUES = (
    "我叫|我是|名叫|叫做|姓名|患者|病人|病患|患儿|家属|联系人|签名|签字|本人|就诊人|"
    "宝宝叫|孩子叫|女儿叫|儿子叫|老公叫|老婆叫|爱人叫|丈夫叫|妻子叫|父亲叫|母亲叫|"
    "主治医生|主治医师|主管医生|接诊医生|检验者|审核者|报告医生|医师签名|医师|收件人"
)
AFTER_TITLES = "医生|大夫|医师|主任|护士|护士长|教授|院长|老师|先生|女士|阿姨|叔叔|同学|师傅"

_BEFORE_RE = re.compile(rf"(?:{BEFORE_CUES})\s*[:：]?\s*(?P<name>{SURNAME_RE}{_GIVEN}{{1,2}})")
_AFTER_RE = re.compile(rf"(?P<name>{SURNAME_RE}{_GIVEN}{{0,2}}?)(?:{AFTER_TITLES})")


@cache
def _jieba() -> object:
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba.posseg


def _word_tags() -> dict[str, str]:
    return _jieba().dt.word_tag_tab  # type: ignore[attr-defined]


def _is_common_word(word: str) -> bool:
    tag = _word_tags().get(word)
    return tag is not None and not tag.startswith("nr")


def trim_name(candidate: str) -> str:
    """Drop trailing characters that are never part of a given name (我叫张伟今年…)."""
    surname_len = 2 if candidate[:2] in COMPOUND_SURNAMES else 1
    end = len(candidate)
    for i in range(surname_len, len(candidate)):
        if candidate[i] in NAME_STOP:
            end = i
            break
    return candidate[:end]


def plausible_name(text: str, start: int, end: int, *, allow_surname_only: bool = False) -> bool:
    name = text[start:end]
    surname_len = 2 if name[:2] in COMPOUND_SURNAMES else 1
    if len(name) < surname_len + (0 if allow_surname_only else 1):
        return False
    if any(c in NAME_STOP for c in name[surname_len:]):
        return False
    # The surname must not end a word that starts before it (谢谢医生, 两周).
    if start > 0 and _is_common_word(text[start - 1 : start + 1]):
        return False
    # Nor start an ordinary word (高热, 高血压) or be one.
    return not any(_is_common_word(text[start : start + n]) for n in (2, 3, 4))


@dataclass
class ContextNameRecognizer:
    """Names introduced by a cue (我叫…, 患者…, 姓名：…) or followed by a title (…医生)."""

    name: str = "name_context"

    def find(self, text: str) -> Iterator[Span]:
        for match in _BEFORE_RE.finditer(text):
            start = match.start("name")
            end = start + len(trim_name(match.group("name")))
            if plausible_name(text, start, end):
                yield Span(
                    start=start,
                    end=end,
                    type=EntityType.NAME,
                    text=text[start:end],
                    source=self.name,
                )
        for match in _AFTER_RE.finditer(text):
            start, end = match.span("name")
            if plausible_name(text, start, end, allow_surname_only=True):
                yield Span(
                    start=start,
                    end=end,
                    type=EntityType.NAME,
                    text=text[start:end],
                    source=self.name,
                )


_CLAUSE_RE = re.compile(r"[^，。！？；、,.!?;\n]+")
_SURNAME_CHAR_RE = re.compile(f"[{SINGLE_SURNAMES}]|" + "|".join(COMPOUND_SURNAMES))


def _worth_tagging(clause: str) -> bool:
    """A surname character that is not part of an ordinary word: the tagger is worth running."""
    for match in _SURNAME_CHAR_RE.finditer(clause):
        i = match.start()
        if i > 0 and _is_common_word(clause[i - 1 : i + 1]):
            continue
        ahead = [clause[i : i + n] for n in (2, 3, 4) if i + n <= len(clause)]
        if any(_is_common_word(word) for word in ahead):
            continue
        if i + 1 < len(clause) and re.match(f"[{_CJK}]", clause[i + 1]):
            return True
    return False


@dataclass
class JiebaNameRecognizer:
    """jieba's person-name tag (``nr``), adjacent pieces merged (朱/nr 秀英/nr -> 朱秀英)."""

    name: str = "name_jieba_nr"

    def find(self, text: str) -> Iterator[Span]:
        posseg = _jieba()
        for clause_match in _CLAUSE_RE.finditer(text):
            clause = clause_match.group(0)
            if not _worth_tagging(clause):
                continue
            offset = clause_match.start()
            pieces = [(w, f) for w, f in posseg.cut(clause)]  # type: ignore[attr-defined]
            cursor = 0
            for index, (word, flag) in enumerate(pieces):
                start = cursor
                cursor += len(word)
                if not flag.startswith("nr"):
                    continue
                end = cursor
                if _is_surname(word) and index + 1 < len(pieces):
                    # 王/nr 桂兰/ns: a surname alone takes the next short piece as given name.
                    nxt, nxt_flag = pieces[index + 1]
                    if len(nxt) <= 2 and nxt_flag[:2] in _GIVEN_FLAGS:
                        end = cursor + len(nxt)
                name = clause[start:end]
                if not 2 <= len(name) <= 4 or not re.match(SURNAME_RE, name):
                    continue
                s, e = offset + start, offset + end
                if plausible_name(text, s, e):
                    yield Span(start=s, end=e, type=EntityType.NAME, text=name, source=self.name)


_GIVEN_FLAGS = frozenset({"nr", "ns", "nz", "ng"})


def _is_surname(word: str) -> bool:
    return word in COMPOUND_SURNAMES or (len(word) == 1 and word in SINGLE_SURNAMES)


register(ContextNameRecognizer())
register(JiebaNameRecognizer())
