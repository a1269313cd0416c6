"""Chinese names in Latin letters (Zhang Wei, Wei ZHANG, LI Xiaoming, Chan Tai-man): a pinyin
or Cantonese surname and a given name of one or two syllables, in either order.

Found by shape, not by a list of people: the surname from a list of the commonest romanised
surnames, the given name only if every part of it is a valid pinyin syllable (or a hyphenated
Hong Kong given name), and a capital where a name has one. Lab codes (ALT, CRP) and English
words fail the syllable test; a lone pinyin word is never a name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from medrealmm.deid.recognizer import gated
from medrealmm.deid.spans import EntityType, Span, words

PINYIN_SURNAMES = frozenset(
    words(
        "wang li zhang liu chen yang huang zhao wu zhou xu sun ma zhu hu guo he gao lin luo "
        "zheng liang xie song tang han feng deng cao peng zeng xiao tian dong pan yuan cai "
        "jiang yu du ye cheng wei su lu ding ren shen yao cui zhong tan fan jin shi liao jia "
        "xia fu fang bai zou meng xiong qin qiu hou yin xue yan duan lei long tao mao hao gu "
        "gong shao wan qian kong mo qi niu kang ouyang situ shangguan zhuge "
        # Cantonese and older romanisations (Hong Kong, Macau, Taiwan, overseas).
        "chan cheung lau wong ng leung lam tsang kwok yeung ho tse fung chow chu tsui lai "
        "mak hui kwan siu yip tam choi chiu lo chung tong yuen kong"
    )
)
_INITIAL = "(?:zh|ch|sh|[bpmfdtnlgkhjqxrzcsyw])?"
_FINAL = (
    "(?:iang|iong|uang|ueng|ang|eng|ing|ong|ian|iao|uai|uan|van|ai|ei|ao|ou|an|en|in|un|vn|ia|ie"
    "|iu|ua|uo|ui|ue|ve|er|a|o|e|i|u|v)"
)
_SYLLABLE = re.compile(f"{_INITIAL}{_FINAL}")
_GIVEN_SYLLABLES = re.compile(f"(?:{_INITIAL}{_FINAL}){{1,2}}")
_WORD = "[A-Z][a-z]+|[A-Z]{2,}"
_PART = "(?:-[A-Za-z][a-z]+)?"  # Tai-man, Xiao-Ming
# A lookahead at each word start, so a failed pair (Dear Zhang) does not hide the next one.
_CAPITAL = re.compile("[A-Z]")  # every match of _PAIR holds one
_PAIR = re.compile(
    rf"(?<![A-Za-z])(?=(?P<a>{_WORD})(?P<a2>{_PART})[ \u00a0]+(?P<b>{_WORD})(?P<b2>{_PART})"
    r"(?![A-Za-z]))"
)


def _given(first: str, second: str) -> bool:
    """One or two syllables in all (Xiaoming, Wei, Tai-man)."""
    if second:
        return all(_SYLLABLE.fullmatch(p.lower()) for p in (first, second[1:]))
    return _GIVEN_SYLLABLES.fullmatch(first.lower()) is not None


@dataclass
class LatinNameRecognizer:
    """A romanised surname beside a pinyin given name, surname first or last."""

    name: str = "name_latin"

    def find(self, text: str) -> Iterator[Span]:
        for match in gated(_CAPITAL, _PAIR, text):
            a, a2, b, b2 = match.group("a", "a2", "b", "b2")
            surname_first = a.lower() in PINYIN_SURNAMES and not a2 and _given(b, b2)
            surname_last = b.lower() in PINYIN_SURNAMES and not b2 and _given(a, a2)
            if not (surname_first or surname_last) or place_or_product(a + " " + b):
                continue  # Hong Kong: a place, though Kong is a surname
            if a.isupper() and b.isupper() and (len(a) < 3 or len(b) < 3):
                continue  # ALT AST, HB A1: codes, not a name in capitals
            start, end = match.start("a"), match.end("b2")
            name = text[start:end]
            yield Span(start=start, end=end, type=EntityType.NAME, text=name, source=self.name)


# Western names in Latin letters (Rachel Gomez, Dr. Anna Lee, Tom O'Brien MD): the shapes the
# Chinese-text recognizers share. A name word is a capital and lower-case letters (so CT, MRI,
# HbA1c never are); an honorific before or a degree after travels with the name.
HONORIFIC = (
    r"(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof|Rev)(?:\.[ \u00a0]*|[ \u00a0]+)|(?:Miss|Sir|Dame)[ \u00a0]+)"
)
DEGREE = r"(?:M\.D\.|Ph\.D\.|MD|PhD|DDS|DMD|DVM|MBBS|RN|MPH)"
_GENERATION = r"(?:Jr\.|Sr\.|Jr|Sr|II|III|IV)(?![型度期级])"  # not a type or grade (II型)
NAME_WORD = r"(?:Mc|Mac|O['’])?[A-Z][a-z]+(?:-[A-Z][a-z]+)?"
_NEXT_WORD = rf"[ \u00a0]+(?:[A-Z]\.[ \u00a0]*)?{NAME_WORD}"  # a middle initial may stand between
# Degrees and generations after a name (…, MD; … Jr. PhD), as many as are written.
NAME_TAIL = rf"(?:,?[ \u00a0]+(?:{DEGREE}|{_GENERATION})(?![A-Za-z]))*"
# A given name and a surname, or three words with a middle name.
FULL_LATIN_NAME = rf"{NAME_WORD}(?:{_NEXT_WORD}){{1,2}}"
# Words of places, products, organisations and greetings that open or close a capitalised
# phrase (New York, Apple Watch, City Hospital, Hello Kitty): such a phrase is no person
# however it is framed.
NOT_PERSON_WORDS = frozenset(
    words(
        "new north south east west saint san santa los las la le el hong kong "
        "watch phone pad pro max plus mini air book city town street road avenue park lake bay "
        "island beach valley mountain university college school hospital clinic center centre "
        "health medical care group bank times news post daily journal press airlines hotel "
        "mall store shop cafe coffee studio music games team club union kingdom states "
        "republic island islands china america england france japan korea "
        "hello hi hey dear good happy merry thank thanks welcome"
    )
)


def place_or_product(phrase: str) -> bool:
    """A capitalised phrase with a word of a place, product or organisation (Hong Kong, Apple
    Watch): whatever frames it, no person."""
    return any(p.lower() in NOT_PERSON_WORDS for p in re.findall("[A-Za-z]+", phrase))


# One or two syllables as pinyin spells a word: a second syllable opens with a consonant (a
# vowel there takes an apostrophe, xi'an), so Lee or Chloe is no pinyin word.
_PINYIN_WORD = re.compile(f"{_INITIAL}{_FINAL}(?:(?:zh|ch|sh|[bpmfdtnlgkhjqxrzcsyw]){_FINAL})?")


def romanised_chinese(phrase: str) -> bool:
    """Every word a run of pinyin syllables (Shang Hai, Wei Zhang): romanised Chinese, which
    ``LatinNameRecognizer`` judges by its surname list, not a Western name."""
    return all(_PINYIN_WORD.fullmatch(p.lower()) for p in re.findall("[A-Za-z]+", phrase))


# A Chinese name in pinyin in any case after a cue that names a person (我叫zhang wei, 患者
# ZhangWei, 我是wang xiaoming): the surname from the list, the given name one or two pinyin
# syllables, with a blank, a capital or nothing between; or the person's initials in place of
# their name (我是LXM, 本人zxm), only after a cue of self or patient naming and never an
# abbreviation medicine or daily life uses.
_PINYIN_NAME = re.compile(
    r"(?P<s>[A-Za-z][a-z]{0,5}|[A-Z]{1,6})(?P<sep>[ \u00a0]?)"
    r"(?P<g>[A-Za-z][a-z]{1,11}|[A-Z]{2,12})"
    r"(?![A-Za-z])"
)
_INITIALS = re.compile(r"(?P<i>[A-Z]{2,4}|[a-z]{2,4})(?=[，,。.！!？?\s的想女男]|$)")
NOT_INITIALS = frozenset(
    words(
        "hiv hbv hcv hpv ct mri icu ccu vip alt ast crp pcos dm ht copd iga igg igm igE ok dr "
        "tcm ecg eeg ekg bmi ldl hdl tsh msg pdf app qq vx wx id sos dna rna ivf pet hba abc "
        "nba usa uk mba phd cpu gps led usb wifi hr bp rr spo sao tc tg ua cr bun wbc rbc plt "
        "hb hgb esr psa afp cea inr pt aptt ana rf ra sle ms als ad pd adhd ocd ptsd ibs gerd "
        "uti uri std ed pe dvt mi chf af vf vt svt lvh rvh ppi nsaid ace arb acei"
    )
)


def pinyin_name_at(text: str, start: int) -> int | None:
    """End of a pinyin name (any case) or of a person's initials starting at ``start``."""
    match = _PINYIN_NAME.match(text, start)
    if match is not None:
        surname, given = match.group("s").lower(), match.group("g").lower()
        joined = match.group("sep") or match.group("g")[0].isupper() or match.group("s").isupper()
        if surname in PINYIN_SURNAMES and joined and _given(given, ""):
            return match.end()
    match = _INITIALS.match(text, start)
    if match is not None and match.group("i").lower() not in NOT_INITIALS:
        return match.end("i")
    return None


# A person introduced in English (this is Jessica, my name is Tom Lee, I'm Amy, my son Kevin):
# a capitalised name word after a frame of naming, not a place, a product, a weekday or a month.
_ENGLISH_INTRO = re.compile(
    r"(?:\b[Mm]y name is|\b[Tt]his is|\bI am|\bI['’]m|\b[Cc]all me|"
    r"\b[Mm]y (?:son|daughter|husband|wife|mother|father|mom|mum|dad|baby|kid|child)"
    r"(?:['’]s name is)?)[ \u00a0]+"
    rf"(?P<name>{HONORIFIC}?{NAME_WORD}(?:[ \u00a0]+{NAME_WORD}){{0,2}})(?![A-Za-z])"
)
_NOT_NAMES = frozenset(
    words(
        "monday tuesday wednesday thursday friday saturday sunday january february march april "
        "may june july august september october november december i the a an not so very "
        "sorry fine ok okay worried pregnant sick diabetic allergic chinese english"
    )
)


@dataclass
class EnglishIntroductionRecognizer:
    """Names after an English naming frame (``_ENGLISH_INTRO``)."""

    name: str = "name_english_intro"

    def find(self, text: str) -> Iterator[Span]:
        for match in gated(_CAPITAL, _ENGLISH_INTRO, text):
            name = match.group("name")
            first = re.findall("[A-Za-z]+", name)[0].lower()
            if first in _NOT_NAMES or place_or_product(name):
                continue
            start, end = match.span("name")
            yield Span(start=start, end=end, type=EntityType.NAME, text=name, source=self.name)
