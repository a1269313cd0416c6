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
            if not (surname_first or surname_last):
                continue
            if a.isupper() and b.isupper() and (len(a) < 3 or len(b) < 3):
                continue  # ALT AST, HB A1: codes, not a name in capitals
            start, end = match.start("a"), match.end("b2")
            name = text[start:end]
            yield Span(start=start, end=end, type=EntityType.NAME, text=name, source=self.name)
