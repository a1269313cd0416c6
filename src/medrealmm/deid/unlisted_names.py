"""Full names no dictionary knows, found by where they stand rather than by what they are.

A surname and one or two given characters the tagger has never seen (a new name is always
unseen) are a name when the sentence treats them as a person: a role word before them (主任…,
记者…), a speech or action verb after them (…说, …透露, …转发), or a clause that holds
nothing else (，…。, the signature at a post's end). The surname list, the common-word and
clinical vetoes of ``names`` decide what may be a name at all, so a drug (…片), a disease or
an ordinary word (高兴, 陈述) in the same position stays. Posts run clauses together, so a
full name right after a dictionary word or a particle counts too when its right side is a break
or a verb; a bare given name needs a person's frame on both sides (对…说, …和…在一起).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from medrealmm.deid.latin_names import (
    DEGREE,
    FULL_LATIN_NAME,
    HONORIFIC,
    NAME_TAIL,
    NAME_WORD,
    place_or_product,
    romanised_chinese,
)
from medrealmm.deid.names import (
    ADJECTIVE_SURNAMES,
    AFTER_TITLES,
    AMBIGUOUS_SURNAMES,
    BEFORE_CUES,
    CLINICAL_LEXICON,
    COMPOUND_SURNAMES,
    DOUBLED_GATE,
    NAME_STOP,
    SINGLE_SURNAMES,
    clinical_term_shaped,
    cut_between,
    is_common_word,
    name_span,
    not_a_given_name,
    plausible_name,
    transliterated,
    used_like_a_drug,
    word_count,
    word_tag,
)
from medrealmm.deid.recognizer import gated, starts_with_one_of
from medrealmm.deid.spans import EntityType, Span, words

_CJK = "\u4e00-\u9fff"
# Surnames that are seldom a word's first syllable: the ambiguous ones (和, 时, 全 …) are left
# to the cue-led rules.
_LEADING = "".join(c for c in SINGLE_SURNAMES if c not in AMBIGUOUS_SURNAMES)
_SURNAME = f"(?:{'|'.join(COMPOUND_SURNAMES)}|[{_LEADING}])"
# The surname's first characters are checked first: the engine derives no prefix from a
# lookahead, and trying every compound surname at every position was most of the scan.
_CANDIDATE_RE = re.compile(
    starts_with_one_of("|".join(COMPOUND_SURNAMES), "|".join(_LEADING))
    + f"(?=(?P<name>{_SURNAME}[{_CJK}]{{1,2}}))"
)
# The ambiguous and rarer surnames (奉, 和, 时 …) need the strongest evidence: a break or cue
# before and a speech verb after (#…奉雨涵说), or a hashtag of their own (#向雨菲#).
_RARE = "".join(c for c in SINGLE_SURNAMES if c in AMBIGUOUS_SURNAMES)
_RARE_CANDIDATE_RE = re.compile(f"(?=(?P<name>[{_RARE}][{_CJK}]{{1,2}}))")

# Role words that introduce a person by name (居委会主任…, 导演…, 网友…): jobs and public
# roles seldom written in a clinical note right before a name.
ROLES_BEFORE = words(
    "主任 记者 编辑 导演 诗人 作家 作者 画家 歌手 演员 主持人 主播 博主 网友 律师 民警 警官 "
    "校长 院长 书记 市长 县长 镇长 村长 局长 部长 董事长 总裁 总经理 会长 队长 班长 教练 "
    "选手 球员 同学 室友 闺蜜 学长 学姐 学弟 学妹 师兄 师姐 师弟 师妹 表哥 表姐 朋友 同事"
)
# Words before a person spoken to or of (对…说, 跟…一起, 陪…, 感谢…).
_ADDRESS_BEFORE = words(
    "对 跟 和 与 同 给 让 叫 问 找 陪 带 替 帮 请 喊 谢谢 感谢 恭喜 祝 转告 告诉 "
    "嫁给 娶了 爱上 暗恋 想念 思念 喜欢上 表白 心疼 回复"
)
_BEFORE = sorted({*ROLES_BEFORE, *_ADDRESS_BEFORE}, key=len, reverse=True)
# The cues as a set, looked up by the few lengths they have: one slice per length instead of
# one ``endswith`` per cue at every candidate.
_BEFORE_SET = frozenset(_BEFORE)
_BEFORE_LENGTHS = sorted({len(cue) for cue in _BEFORE})
# What a person does right after being named: speech and report verbs, and acts of posting.
_VERB_AFTER_RE = re.compile(
    "(?:说|表示|告诉|透露|认为|指出|介绍|称|坦言|回忆|笑称|解释|强调|回应|回复|写道|问道|"
    "答道|执导|主演|演唱|转发|分享|发表|评论|点赞|同学|童鞋|君|酱|"
    # acts only a person does: crying, marrying, being wished a happy birthday or cheered on
    "哭了|笑了|结婚|嫁给|娶了|生日快乐|加油|我爱你|爱你|么么哒)"
)
# Words before a clause whose subject is a person: one introducing themself (我是…) or the one
# a thought or report is about (怀疑…, 听说…). Only a surname and two given characters count
# there, and only where a word starts after them (``_closed_after``).
# The cues of the rules (患者…, 家属…, 我妈…) say so too.
_SUBJECT_BEFORE = frozenset(
    {
        *words("我是 怀疑 觉得 认为 相信 听说 发现 知道 以为 感觉 记得 据说 猜"),
        *BEFORE_CUES.split("|"),
    }
)
_SUBJECT_LENGTHS = sorted({len(cue) for cue in _SUBJECT_BEFORE})
_SUBJECT_LAST = frozenset(cue[-1] for cue in _SUBJECT_BEFORE)  # most positions fail on it
# What a person owns or writes, after 的 (…的博文, …的主页) or 家的 (…家的猫): a frame on the
# right as strong as a speech verb.
_OWNED_AFTER_RE = re.compile(
    "家的|的(?:博文|微博|博客|主页|文章|日志|日记|帖子|空间|相册|照片|头像|签名|评论|作品|"
    "新歌|歌|新书|小说|粉丝)"
)
_TITLE_RE = re.compile(f"(?:{AFTER_TITLES})")
# Parts of speech a given name's last character never has when a clause runs on after it.
_NOT_NAME_END_TAGS = frozenset({"v", "p", "d", "c", "u", "uj", "ul", "r", "m", "q", "f", "y"})
# A clause break: punctuation, a space, an emoji or hashtag bracket, or the text's edge.
_BREAK = set("，。！？、；：,.!?;:～~〜…（）()【】[]《》“”\"'#@/|-—_ \t\n\r")


def _break_before(text: str, start: int) -> bool:
    return start == 0 or text[start - 1] in _BREAK


def _break_after(text: str, end: int) -> bool:
    return end == len(text) or text[end] in _BREAK


# Particles and interjections that end a clause written without punctuation (快乐丫…, 好啊…).
_PARTICLES = set("丫呀啊吧啦哦呢嘛哈嘻呵噢喔哟呦耶")


def _word_before(text: str, start: int) -> bool:
    """A clause run on without a break: a particle, or a dictionary word of two or more
    characters (…思密达, …天下), ends right before ``start``."""
    if start > 0 and text[start - 1] in _PARTICLES:
        return True
    return any(start >= k and word_tag(text[start - k : start]) is not None for k in (4, 3, 2))


_EMOJI_CODE_RE = re.compile(r"\[[^\[\]]{1,8}\]")


def _emoji_code(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` lies inside a bracketed emoji code ([哈哈], [哈哈熊鬼脸])."""
    return any(
        m.start() < start and end < m.end()
        for m in _EMOJI_CODE_RE.finditer(text, max(0, start - 8), end + 8)
    )


def _whole_hashtag(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` is a whole hashtag (#向雨菲#): a fan's topic that is one name, as
    strong a frame as a speech verb after it."""
    return text[start - 1 : start] == "#" and text[end : end + 1] == "#"


def person_frame(text: str, start: int, end: int) -> bool:
    """A person's frame around ``text[start:end]``: a speech or posting verb after it
    (…说, …加油), or a role or address word before it (感谢…, 对…)."""
    return _VERB_AFTER_RE.match(text, end) is not None or _cue_before(text, start)


def _cue_before(text: str, start: int) -> bool:
    return any(start >= k and text[start - k : start] in _BEFORE_SET for k in _BEFORE_LENGTHS)


def _acts_after(text: str, end: int) -> bool:
    """A person's frame right of a full name: a speech or posting verb, or what a person owns
    (…的博文, 我…家的: a pronoun before it is the owner's)."""
    return (
        _VERB_AFTER_RE.match(text, end) is not None or _OWNED_AFTER_RE.match(text, end) is not None
    )


_PRONOUNS = frozenset("我你他她")


def _runs_on(text: str, start: int) -> bool:
    """A full name of three characters run on with no break before it: a word or particle
    ends before it and a break or a person's act follows (…思密达|滕嘉朔|说), or a pronoun
    owns it (我|柯待桥|家的)."""
    acts = _acts_after(text, start + 3)
    if not (acts or _break_after(text, start + 3)):
        return False
    return _word_before(text, start) or (acts and text[start - 1 : start] in _PRONOUNS)


def _subject_before(text: str, start: int) -> bool:
    if start == 0 or text[start - 1] not in _SUBJECT_LAST:
        return False
    return any(start >= k and text[start - k : start] in _SUBJECT_BEFORE for k in _SUBJECT_LENGTHS)


def _closed_after(text: str, start: int, end: int) -> bool:
    """The full name ``text[start:end]`` run on into its clause ends at ``end``: a particle or
    a laugh (…哈哈) follows, or a word starts there (韩人意|早在, or as jieba cuts
    韩人意|好恐怖), with no dictionary word across (王人|平时)."""
    if end < len(text) and text[end] in _PARTICLES:
        return True
    across = ((end - 1, end + 1), (end - 2, end + 1), (end - 1, end + 2))
    if any(word_tag(text[a:b]) is not None for a, b in across):
        return False
    # A dictionary word starting right there is the cut jieba would make; else ask jieba.
    starts = any(word_tag(text[end : end + k]) is not None for k in (2, 3, 4))
    return starts or cut_between(text, start, end)


# Characters that end a name in running text (…天, …月, …家, …如果, …刚才) yet often stand
# inside a two-character given name (天池, 家豪, 佳人, 梦如, 志刚, 胜男): one is allowed there
# when the whole name stands alone or a person's frame closes it.
_INNER_STOPS = frozenset("天月家和开来向人如刚才生男日")


# Dictionary tags a two-character given name may carry: names and places (…国华, …海南); and
# where a break or a speech verb closes the name, rare nouns too (海波, 建军, 春花: given names
# are often nouns, but rare ones: ``RARE_NOUN`` is the dictionary count below which a noun
# may be a given name, 海波 28 and 建军 170, not 萝卜 343 or 朋友 9200). A surname that is also
# an address word (祝, 对, 请) is that word before a noun (祝|钱包|生日快乐).
_GIVEN_TAGS = frozenset({"nz", "ns"})
RARE_NOUN = 300


def _given_ok(given: str, *, alone: bool = False) -> bool:
    """A given part holds no function or clinical character and, at two characters, is no
    ordinary word (…高兴, …医院). ``alone``: a break or a verb closes the full name, so one
    character of ``_INNER_STOPS`` does not end it early (柯天池 as a clause of its own; not
    黄天来|了, two of them)."""
    stops = NAME_STOP - _INNER_STOPS if alone and len(given) == 2 else NAME_STOP
    if not_a_given_name(given, stops=False) or any(c in stops for c in given):
        return False
    if sum(c in NAME_STOP for c in given) > 1:
        return False
    if len(given) == 2:
        tag = word_tag(given)
        if tag == "n" and alone:
            return word_count(given) < RARE_NOUN
        return tag is None or tag.startswith("nr") or tag in _GIVEN_TAGS
    return True


_ROLE_RE = re.compile("|".join(_BEFORE))
_FOREIGN_RUN_RE = re.compile(f"[{_CJK}]{{3,6}}")


def foreign_after_role(text: str) -> Iterator[Span]:
    """A transliterated foreign name with no dot after a role or address word (诗人萨莫尼卡,
    跟卡梅隆): the longest run of name syllables, three or more, that neither is nor starts
    an ordinary word, a place (巴基斯坦) or a medicine."""
    for role in _ROLE_RE.finditer(text):
        run = _FOREIGN_RUN_RE.match(text, role.end())
        if run is None:
            continue
        end = role.end()
        while end < run.end() and transliterated(text[end]) and text[end] not in NAME_STOP:
            if text[end] in _PARTICLES and text[end + 1 : end + 2] == text[end]:
                break  # 我叫柯劳斯|哈哈哈: a laugh, not the name's syllables
            end += 1
        start = role.end()
        name = text[start:end]
        if end - start < 3 or any(
            is_common_word(text[start:k]) for k in range(start + 2, start + 7)
        ):
            continue
        if clinical_term_shaped(text, start, end) or used_like_a_drug(text, start, end):
            continue
        yield Span(start=start, end=end, type=EntityType.NAME, text=name, source="name_unlisted")


# What ends a place or an organisation's name: after one of these the model's place is that
# place (柯|天池 as a name, but 张|家港市 or 李|村路 stay the model's).
_PLACE_TAIL = frozenset("省市县区镇乡村路街道巷弄号山湖河江海桥站园店馆院局厂司校所")


def surname_before_place(text: str, start: int, end: int) -> int | None:
    """The start of a full name whose given part the model read as a two-character place
    (柯|天池): a leading surname at a clause start or after a cue, right before it, the three
    characters no dictionary word and nothing of a place's ending after them. Given names
    are often place words (天池, 海南, 建国); a surname before one at a clause start is the
    person, not a place (a place after a verb or a preposition has no surname before it)."""
    at = start - 1
    if end - start != 2 or at < 0 or text[at] not in _LEADING:
        return None
    if not (_break_before(text, at) or _cue_before(text, at)):
        return None
    if text[end : end + 1] in _PLACE_TAIL or word_tag(text[at:end]) is not None:
        return None
    if is_common_word(text[at : start + 1]) or word_tag(text[end - 1 : end + 1]) is not None:
        return None
    if not plausible_name(text, at, end, inner_stops=_INNER_STOPS):
        return None
    return at


@dataclass
class UnlistedFullNameRecognizer:
    """A surname + given name in a person's position: after a role or address word, before
    a speech or posting verb, or standing alone as a clause."""

    name: str = "name_unlisted"

    def find(self, text: str) -> Iterator[Span]:
        taken_until = -1
        for match in _CANDIDATE_RE.finditer(text):
            start = match.start()
            if start < taken_until:
                continue
            span = self._at(text, start, match.group("name"))
            if span is not None:
                taken_until = span.end
                yield span
        yield from foreign_after_role(text)
        for match in _RARE_CANDIDATE_RE.finditer(text):
            span = self._at(text, match.start(), match.group("name"), verb_only=True)
            if span is not None:
                yield span

    def _at(self, text: str, start: int, run: str, *, verb_only: bool = False) -> Span | None:
        surname_len = 2 if run[:2] in COMPOUND_SURNAMES else 1
        cue = _cue_before(text, start)
        subject = not cue and len(run) - surname_len == 2 and _subject_before(text, start)
        alone_left = cue or subject or _break_before(text, start)
        run_on = not alone_left and not verb_only and len(run) == 3 and _runs_on(text, start)
        if not (alone_left or run_on) or (start > 0 and text[start - 1] == text[start]):
            return None  # …林林总总: the surname character doubles a word's first
        for length in (3, 2):
            end = start + length
            if length > len(run) or length <= surname_len:
                continue
            name = text[start:end]
            full = length - surname_len == 2
            verb = _acts_after(text, end) if full else _VERB_AFTER_RE.match(text, end) is not None
            alone = _break_after(text, end)
            # 我叫韩人意|好恐怖: in a person's frame, a word starting after it closes the name.
            run_into = (
                full
                and (cue or subject)
                and not (alone or verb)
                and _given_ok(name[surname_len:], alone=True)  # the cheap checks before jieba
                and _closed_after(text, start, end)
            )
            alone = alone or run_into
            # Two characters (张伟) are a name only with a cue or verb beside them; alone they
            # are as often a word the dictionary lacks.
            if not (verb or (cue and alone) or (length == 3 and (alone or cue))):
                continue
            if run_on and (length != 3 or word_tag(text[start - 1 : start + 1]) is not None):
                continue  # run on: only a full three-character name, no word across its edge
            framed = verb or _whole_hashtag(text, start, end)
            if verb_only and (not framed or word_tag(name) or word_tag(text[start : start + 2])):
                continue  # 安静|说话: jieba calls some words names (安静/nr); want none at all
            if _emoji_code(text, start, end):
                continue  # [哈哈熊鬼脸]: an emoji code, not a name
            closed = (alone or verb) and text[start] not in _BEFORE_SET  # not 祝|钱包|生日快乐
            given_ok = _given_ok(name[surname_len:], alone=closed)
            if not given_ok or _TITLE_RE.match(text, start + surname_len):
                continue  # 欧阳|主任: a title after the surname is the title rule's
            if (
                length == 3
                and (run_into or not (alone or verb))
                and word_tag(name[2]) in _NOT_NAME_END_TAGS
                and name[2] not in _INNER_STOPS
            ):
                continue  # 给刘洋|买了: a verb or particle after a two-character name
            tag = word_tag(name)
            if tag is not None and not tag.startswith("nr"):
                continue
            if is_common_word(text[start : start + 2]) and surname_len == 1:
                continue  # 高兴, 陈述: the surname heads an ordinary word
            if cue and start > 0 and word_tag(text[start - 1 : start + 1]) is not None:
                continue  # 对|方, 祝|贺: the cue and the surname are one word, whatever its tag
            if used_like_a_drug(text, start, end):
                continue  # 和…能一起用吗: a medicine, even after an address word
            inner = _INNER_STOPS if length == 3 and (alone or verb) else frozenset()
            if plausible_name(text, start, end, after_cue=cue, inner_stops=inner):
                return Span(start=start, end=end, type=EntityType.NAME, text=name, source=self.name)
        return None


_SELF_INTRODUCTION = frozenset(words("我叫 我是 名叫 叫做"))


def introduced_name_end(text: str, start: int, end: int) -> int:
    """``end``, or the end of the full name a span from ``start`` right after 我叫 or 我是
    runs on past (邵福来|哈哈好开心呀): the model reads the clause after a name it does not
    know as part of it, where the rules see where a word starts."""
    if text[max(0, start - 2) : start] not in _SELF_INTRODUCTION:
        return end
    match = _CANDIDATE_RE.match(text, start)
    if match is None:
        return end
    span = UnlistedFullNameRecognizer()._at(text, start, match.group("name"))
    return span.end if span is not None and span.end < end else end


# A surname and a doubled given character (宋晚晚, 李菲菲): the doubled pair is no word a
# tagger knows, so it cuts the name short. Colour and texture words double the same way
# (金灿灿, 黄澄澄): ``plausible_name`` turns those down.
_DOUBLED_GIVEN_RE = re.compile(f"(?P<name>{_SURNAME}(?P<c>[{_CJK}])(?P=c))(?!(?P=c))")
_NOT_DOUBLED = frozenset(
    words(
        "天天 常常 刚刚 慢慢 渐渐 偏偏 往往 明明 好好 早早 时时 处处 个个 仅仅 稍稍 微微 "
        "悄悄 轻轻 每每 连连 频频 屡屡 久久 哈哈 呵呵 嘿嘿 嘻嘻 妈妈 爸爸 哥哥 姐姐 弟弟 妹妹 "
        "爷爷 奶奶 宝宝 叔叔 舅舅 姑姑 伯伯 婆婆 公公 谢谢 看看 想想 试试 说说 走走 等等 "
        "点点 些些 多多 少少 人人 家家 年年 月月 日日 次次 样样 件件 条条 声声 步步 层层"
    )
)
_INTERJECTIONS = "哈呵嘿嘻呜哇咯啊哦呀嗷哼咳嘤咿吭咩啦嘛噗喵汪嗯嘟嘀哒叮咚啪嘭呼"
# A name given by a word that says "name" (名叫…, 外号…, 小名…, 网名…): whatever runs up to
# the next break or ending is the name, whether or not it starts with a surname.
_NAMED_AS_RE = re.compile(
    "(?:名叫|名字叫|名字是|外号|小名|绰号|网名|昵称|英文名|乳名)(?:是|叫)?[:：【]?"
    f"(?P<name>[{_CJK}]{{2,4}}?|[A-Za-z][a-z]{{1,15}})"
    rf"(?=[的是说和跟也都就，。！？、；：,.!?;:”\"】\s]|$)"
)
# …and one run on into the next clause with no break (外号小圆脸经常迟到): the value is the
# two or three characters after which a dictionary word starts.
_NAMED_AS_CUE_RE = re.compile(
    "(?:名叫|名字叫|名字是|外号|小名|绰号|网名|昵称|英文名|乳名)(?:是|叫)?[:：【]?"
    f"(?=[{_CJK}]{{4}})"
)


def _named_run_on(text: str, start: int) -> int | None:
    """The end of a name run on after a word for "name" at ``start``: the longest of three
    or two characters that a dictionary word of two characters follows."""
    for length in (3, 2):
        end = start + length
        value = text[start:end]
        if any(c in NAME_STOP for c in value) or is_common_word(value):
            continue
        if word_tag(text[end : end + 2]) is not None and word_tag(text[end - 1 : end + 1]) is None:
            return end
    return None


# …and the one named, right before a word for a nickname (阿宁外号…, 果果小名…).
_NICKNAME_WORDS = "外号|绰号|小名|网名|昵称|乳名"
_NICKNAME_GATE = re.compile(_NICKNAME_WORDS)
_NAMED_ONE_RE = re.compile(f"(?P<name>[{_CJK}]{{2}})(?={_NICKNAME_WORDS})")


def _named_one(text: str, start: int, end: int) -> bool:
    """``text[start:end]``, the two characters before a word for a nickname, is the person
    whose nickname is given: a given name or pet name (``_bare_given``) that no word runs
    across the left edge of and, unless doubled, that does not end in a verb or a function
    character (取个|外号, 起了|绰号)."""
    value = text[start:end]
    if start > 0 and word_tag(text[start - 1 : start + 1]) is not None:
        return False
    if value[0] != value[1] and word_tag(value[1]) in _NOT_NAME_END_TAGS:
        return False
    return _bare_given(value) and not clinical_term_shaped(text, start, end)


# A Latin given name or nickname right before a title (Lily老师, coco小姐): not an
# all-capitals abbreviation (ICU护士).
_LATIN_TITLED_RE = re.compile(f"(?<![A-Za-z])(?P<name>[A-Za-z][a-z]{{1,15}})(?=(?:{AFTER_TITLES}))")
# A Latin name of three or more letters, any case, as the subject of a speech verb (yoyo说,
# Kevin表示): not inside an address, a handle or a code (the letters stand alone).
_LATIN_SPEECH = "说(?!明|法)|表示|告诉|透露|坦言|写道|问道|答道|回复|笑称"
_LATIN_SPEAKS_RE = re.compile(
    rf"(?<![A-Za-z0-9@._/:#-])(?P<name>[A-Za-z][a-z]{{2,15}})(?={_LATIN_SPEECH})"
)


# A Western full name in Latin letters: after an honorific (Dr. Anna Lee, Ms. Lee), before a
# degree or Jr./Sr. (Tom Smith MD), or framed as a person with no cue before it: greeted (Anna
# Lee您好), titled (Anna Lee医生), speaking (Anna Lee说) or saluted (below). Honorifics and
# degrees are part of it.
_LATIN_HONORED_RE = re.compile(
    rf"(?<![A-Za-z])(?P<name>{HONORIFIC}{NAME_WORD}(?:[ \u00a0]+{NAME_WORD}){{0,2}}{NAME_TAIL})"
    r"(?![A-Za-z])"
)
_LATIN_DEGREED_RE = re.compile(
    rf"(?<![A-Za-z])(?P<name>{FULL_LATIN_NAME}{NAME_TAIL}"
    rf",?[ \u00a0]+(?:{DEGREE}|Jr\.|Sr\.)(?![A-Za-z]){NAME_TAIL})"
)
_LATIN_FRAMED_RE = re.compile(
    rf"(?<![A-Za-z0-9@._/:#-])(?P<name>{FULL_LATIN_NAME}{NAME_TAIL})"
    rf"(?=[ \u00a0]?[,，]?[ \u00a0]?(?:您好|你好)|(?:{AFTER_TITLES})|{_LATIN_SPEECH})"
)
# …or saluted (Dear Anna Lee, 亲爱的Anna Lee, 致Anna Lee：).
_LATIN_SALUTED_RE = re.compile(
    r"(?:(?<![A-Za-z])(?:Dear|Hi|Hello|Hey)[ \u00a0]*,?[ \u00a0]+|亲爱的|尊敬的|致)"
    rf"(?P<name>{FULL_LATIN_NAME}{NAME_TAIL})(?![A-Za-z])"
)
# Gates: an honorific, or two capitalised words (every full name holds its first two).
_HONORIFIC_GATE = re.compile(r"(?:Dr|Mrs?|Ms|Mx|Prof|Rev|Miss|Sir|Dame)[. \u00a0]")
_TWO_WORDS_GATE = re.compile(r"[A-Z][a-z]+[ \u00a0]+[A-Z]")


# A performer's Latin name before the words of a fan's post (SHE演唱会, Jay签名, Eason的歌迷):
# a capital and two or more letters standing alone, not inside an address, handle or code.
_LATIN_PERFORMER_RE = re.compile(
    r"(?<![A-Za-z0-9@._/:#-])(?P<name>[A-Z][A-Za-z]{2,15})"
    "(?=演唱会|签名|的?歌迷|的?粉丝|的?新歌|的?新专辑|见面会|巡演)"
)


# A given name with an affectionate suffix and no surname (逸凡君, 小葵酱, 子墨童鞋): the two
# characters before it, when no dictionary knows them as a word.
_SUFFIXED_RE = re.compile(f"(?P<name>[{_CJK}]{{2}})(?=君|酱|童鞋|兄弟)")
# …and a longer nickname of that shape (小小丸子童鞋, 阿呆呆君): 小 or 阿 and two or three
# characters, starting a clause or run on after a word, when the whole is no dictionary word.
_LONG_SUFFIXED_RE = re.compile(f"(?P<name>[小阿][{_CJK}]{{2,3}}?)(?=童鞋|君|酱)")


# A given name with no surname framed as a person on both sides: spoken to and speaking
# (对…说, 跟…讲), or one of a couple (…和…在一起, …与…结婚).
_SPOKEN_TO_RE = re.compile(f"(?:对|跟|和|告诉|问)(?P<name>[{_CJK}]{{2}})(?=说|讲|表白|道歉|撒娇)")
_COUPLE_RE = re.compile(
    f"(?P<a>[{_CJK}]{{2}})(?:和|与|跟)(?P<b>[{_CJK}]{{2,3}}?)"
    "(?=在一起|结婚|订婚|离婚|分手|牵手|恋爱|复合|约会|相爱|接吻)"
)
_SUFFIX_GATE = re.compile("君|酱|童鞋|兄弟")
_COUPLE_GATE = re.compile("在一起|结婚|订婚|离婚|分手|牵手|恋爱|复合|约会|相爱|接吻")
_LATIN_GATE = re.compile("[A-Za-z]")
_NOT_GIVEN_START = "这那每诸各此我你他她它您咱俺谁某们"


def doubled_pet_name(value: str) -> bool:
    """A doubled character (乐乐, 晶晶) that may be a pet name: no doubled adverb, kin word or
    interjection (常常, 妈妈, 哈哈), no pronoun, no clinical character. Dictionaries list many
    such pairs as adjectives or nouns, so their tag is no evidence against a person."""
    if len(value) != 2 or value[0] != value[1] or value[0] in _NOT_GIVEN_START:
        return False
    if value in _NOT_DOUBLED or value[0] in _INTERJECTIONS:
        return False
    return not not_a_given_name(value[0], stops=False)


def _bare_given(value: str) -> bool:
    """Two or three characters that may be a given name or nickname standing alone: no
    pronoun, no clinical character, no ordinary word. The frame on both sides is the
    evidence, so characters that end a name in running text (如, 周) are allowed, and a
    doubled pair (a pet name a tagger reads as a doubled verb) passes on its shape."""
    if any(c in _NOT_GIVEN_START for c in value):
        return False
    if len(value) == 2 and value[0] == value[1]:
        return doubled_pet_name(value)
    if not_a_given_name(value, stops=False):
        return False
    tag = word_tag(value)
    return value not in CLINICAL_LEXICON and (tag is None or tag.startswith("nr") or tag == "nz")


def _suffixed_nickname(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` (小 or 阿 and two or three characters before 童鞋, 君, 酱) is a
    nickname: its left edge is a clause start or a word's end, and neither it nor its tail
    after 小 or 阿 is an ordinary word (小伙伴童鞋, 小朋友君 are people, but not named)."""
    value = text[start:end]
    if not (_break_before(text, start) or _word_before(text, start)):
        return False
    if start > 0 and word_tag(text[start - 1 : start + 1]) is not None:
        return False  # 大小|…: the 小 ends a word before it
    if any(c in NAME_STOP for c in value[1:]) or is_common_word(value):
        return False
    if is_common_word(value[1:]) or value[1:] in CLINICAL_LEXICON:
        return False
    return not clinical_term_shaped(text, start, end)


@dataclass
class NamedAsRecognizer:
    """Names by the shape of how they are given: a surname with a doubled given character,
    the value after a word for "name" (外号…, 小名…), a Latin name before a title, a speech
    verb or a fan's words (SHE演唱会), a Western full name with an honorific or a degree, or
    greeted, titled, speaking or saluted."""

    name: str = "name_named_as"

    def find(self, text: str) -> Iterator[Span]:
        for match in gated(DOUBLED_GATE, _DOUBLED_GIVEN_RE, text):
            start, end = match.span("name")
            pair = text[start + 1 : end]
            surname_len = 2 if text[start : start + 2] in COMPOUND_SURNAMES else 1
            if surname_len != 1 or text[start] in ADJECTIVE_SURNAMES or pair in _NOT_DOUBLED:
                continue
            if start > 0 and text[start - 1] == text[start]:
                continue  # 林林总总: a word doubled pair by pair
            if text[start] == pair[0] or not _given_ok(pair[0]):
                continue
            if pair[0] in _INTERJECTIONS:
                continue
            if word_tag(pair) in {"d", "m", "q", "p", "c", "u", "t", "ad", "vd", "f", "r", "y"}:
                continue
            if is_common_word(text[start : start + 2]) or is_common_word(text[start:end]):
                continue
            if plausible_name(text, start, end):
                yield name_span(text, start, end, self.name)
        named = [(m.start("name"), m.end("name")) for m in _NAMED_AS_RE.finditer(text)]
        for cue in _NAMED_AS_CUE_RE.finditer(text):
            if not any(a == cue.end() for a, _ in named):
                end = _named_run_on(text, cue.end())
                if end is not None:
                    named.append((cue.end(), end))
        for start, end in named:
            value = text[start:end]
            if any(c in NAME_STOP for c in value) or is_common_word(value):
                continue
            if used_like_a_drug(text, start, end):
                continue
            yield Span(start=start, end=end, type=EntityType.NAME, text=value, source=self.name)
        for match in gated(_NICKNAME_GATE, _NAMED_ONE_RE, text):
            if _named_one(text, *match.span("name")):
                yield name_span(text, *match.span("name"), self.name)
        for match in gated(_SUFFIX_GATE, _SUFFIXED_RE, text):
            start, end = match.span("name")
            value = text[start:end]
            if word_tag(value) is not None or not _given_ok(value) or value[0] in "这那每诸各此":
                continue
            if word_tag(text[end - 1 : end + 1]) is not None:
                continue  # 在座|诸君: the suffix makes a word with the pair's last character
            if plausible_name(text, start, end, after_cue=True):
                yield Span(start=start, end=end, type=EntityType.NAME, text=value, source=self.name)
        for match in _LONG_SUFFIXED_RE.finditer(text):
            start, end = match.span("name")
            if _suffixed_nickname(text, start, end):
                yield name_span(text, start, end, self.name)
        for match in _SPOKEN_TO_RE.finditer(text):
            start, end = match.span("name")
            if _bare_given(text[start:end]) and not clinical_term_shaped(text, start, end):
                yield name_span(text, start, end, self.name)
        for match in gated(_COUPLE_GATE, _COUPLE_RE, text):
            a_start = match.start("a")
            if a_start > 0 and word_tag(text[a_start - 1 : a_start + 1]) is not None:
                continue  # 看到|他和…: the pair's first character ends a word before it
            for group in ("a", "b"):
                start, end = match.span(group)
                if _bare_given(text[start:end]) and not clinical_term_shaped(text, start, end):
                    yield name_span(text, start, end, self.name)
        latin = (_LATIN_TITLED_RE, _LATIN_SPEAKS_RE, _LATIN_PERFORMER_RE)
        for match in (m for p in latin for m in gated(_LATIN_GATE, p, text)):
            start, end = match.span("name")
            if not place_or_product(match.group("name")):
                yield name_span(text, start, end, self.name)
        yield from self._western_names(text)

    def _western_names(self, text: str) -> Iterator[Span]:
        """Western full names in Latin letters (``_LATIN_HONORED_RE`` and the three after
        it): an honorific or a degree says person wherever it stands; a greeting, title,
        speech verb or salutation does for a phrase of no place or product word (Apple
        Watch说 stays)."""
        for match in gated(_HONORIFIC_GATE, _LATIN_HONORED_RE, text):
            yield name_span(text, *match.span("name"), self.name)
        if _TWO_WORDS_GATE.search(text) is None:
            return
        for match in _LATIN_DEGREED_RE.finditer(text):
            yield name_span(text, *match.span("name"), self.name)
        framed = (_LATIN_FRAMED_RE, _LATIN_SALUTED_RE)
        for match in (m for p in framed for m in p.finditer(text)):
            start, end = match.span("name")
            name = match.group("name")
            if place_or_product(name) or romanised_chinese(name):
                continue
            if not clinical_term_shaped(text, start, end):
                yield name_span(text, start, end, self.name)
