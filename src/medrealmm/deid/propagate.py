"""Identities propagate: the forms a masked entity takes elsewhere in the same consultation.

One step after the text pass (and, for a caller holding OCR lines, the image pass): from the
spans already masked it derives each entity's other written forms and masks them in every
turn. A person's name and a hospital's full name are found where a recognizer could read
them; the same entity is then often written in a form no recognizer can tell from a word:

* a hospital's stem and its locals' abbreviations, by rule: the place before it dropped
  (北京协和医院 -> 协和, 协和医院), a university hospital's number (中山大学附属第一医院 ->
  中山一院, 中山一附院, 中大附一, 一附院), a city's numbered or people's hospital (某市第一人民
  医院 -> 市一院, 某一院; 某省人民医院 -> 省人医);
* a person's surname with a title or a familiar prefix (张医生, 张阿姨, 老张, 小张), a one
  character given name with one (阿英, 小英), and the name's pinyin in either order, any case,
  spaced or joined, and its initials (Zhang Xiuying, XIUYING ZHANG, ZXY);
* the other half of a number split over two lines or two turns, when the two halves add up to
  the length of the number masked (a mobile number, an ID card number).

Precision is the price of a rule that reaches every turn, so every form is held back when it
is an ordinary word: a stem that is an everyday word only counts with its institution word
(仁爱医院, not 仁爱), a familiar form that the dictionary knows (小时, 老方) never counts, nor
a surname that ends a word before it (主任医生 holds no 任医生), nor initials that are a
clinical abbreviation (陈涛 -> CT). A given name of two characters is ``make_consistent``'s
(``text._surfaces``), with the same test.

``propagate`` is a pure function from texts and their masked spans to extra spans; OCR lines
are texts like any other, and ``also`` takes entities masked elsewhere (another turn's, an
image's) whose forms are looked for in ``texts`` too.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from functools import cache

from medrealmm.deid.names import (
    AFTER_TITLES,
    COMPOUND_SURNAMES,
    SURNAME,
    is_common_word,
    word_count,
    word_tag,
)
from medrealmm.deid.spans import EntityType, Span, words

SOURCE = "propagation"
_HAN = re.compile("[\u4e00-\u9fff]+")
_HAN_CHAR = re.compile("[\u4e00-\u9fff]")

# ---------------------------------------------------------------- hospitals

_NUMERAL = "一二三四五六七八九十"
_BRANCH = re.compile(r"[（(][^）)]*[）)]$|[\u4e00-\u9fff]{1,6}(?:分院|院区)$")
# Provinces, regions and cities named with their level word (广东省, 新疆维吾尔自治区, 广州市).
_ADMIN = re.compile("^(?:中国)?(?P<place>[\u4e00-\u9fff]{1,7}?)(?P<level>省|自治区|市|县|区)")
_UNIVERSITY = re.compile(
    f"^(?P<u>[\u4e00-\u9fff]{{2,6}}?)(?:医科|中医药|医学)?大学(?:[\u4e00-\u9fff]{{0,4}}医学院)?"
    f"(?:附属|第)(?:第?(?P<n>[{_NUMERAL}]{{1,2}}))?(?:人民|临床)?医院$"
)
_UNIVERSITY_NAMED = re.compile(
    "^[\u4e00-\u9fff]{2,6}?(?:医科|中医药|医学)?大学(?:[\u4e00-\u9fff]{0,4}医学院)?"
    "(?:附属)?(?P<stem>[\u4e00-\u9fff]{2,4}?)医院$"
)
_NUMBERED = re.compile(f"^第(?P<n>[{_NUMERAL}]{{1,2}})(?:人民)?医院$")
_KINDS = {"人民医院": "人医", "中医院": "中医院", "中医医院": "中医院", "妇幼保健院": "妇幼"}
_SUFFIX = re.compile(
    "(?:中心医院|人民医院|中医医院|中医院|中西医结合医院|妇幼保健院|儿童医院|妇产医院|肿瘤医院"
    "|口腔医院|眼科医院|医院)$"
)
# Stems that name a kind of hospital, not one hospital: never a form of their own.
_GENERIC_STEMS = frozenset(
    words(
        "人民 中医 中心 妇幼 儿童 妇产 肿瘤 口腔 眼科 附属 大学 医科 医学院 第一 第二 第三 "
        "中西医结合 社区 乡镇 县 市 省 区 专科 综合 传染病 精神病 康复 骨科"
    )
)
# The dictionary's tag for a place: a place heading a hospital's name (北京协和) is dropped.
_PLACE_TAGS = frozenset({"ns"})
# How often the dictionary may count a stem that is masked wherever it stands.
_EVERYDAY_STEM = 200
# What follows a hospital's name where care is sought there (长寿看的, 友谊复查, 华山睇咗).
_CARE_AFTER = "医院|院|看|睇|就诊|住院|复查|挂号|检查|做的|说|开的|拍|的医生|的专家|的主任|那边"


def _strip_place(core: str) -> str:
    """``core`` without the place that heads it (北京协和 -> 协和), when what is left is
    still a name of two characters or more; otherwise ``core`` itself (鼓楼, 西京)."""
    admin = _ADMIN.match(core)
    while admin is not None and len(core) - admin.end() >= 2:
        core = core[admin.end() :]
        admin = _ADMIN.match(core)
    for n in (3, 2):
        rest = core[n:]
        if len(rest) >= 2 and word_tag(core[:n]) in _PLACE_TAGS and rest not in _GENERIC_STEMS:
            return rest
    return core


def hospital_forms(name: str) -> tuple[set[str], set[str]]:
    """The short forms of a hospital's full ``name``: (forms masked wherever they appear,
    forms masked only before a care word — a stem that is an everyday word)."""
    name = _BRANCH.sub("", name)
    forms: set[str] = set()
    guarded: set[str] = set()
    if (uni := _UNIVERSITY.match(name)) is not None:
        u, n = _strip_place(uni["u"]) if len(uni["u"]) > 2 else uni["u"], uni["n"]
        head = u[0] + "大"
        if n:
            forms |= {f"{u}{n}院", f"{u}{n}附院", f"{u}附{n}", f"{u}附{n}院", f"{head}附{n}"}
            forms |= {f"{head}{n}院", f"{head}附{n}院", f"{n}附院", f"附{n}院", f"{u}大附{n}"}
        else:
            forms |= {f"{u}附院", f"{head}附院", f"{u}大附院"}
        return forms, guarded
    if (named := _UNIVERSITY_NAMED.match(name)) is not None:
        name = named["stem"] + "医院"
    admin = _ADMIN.match(name)
    place, level = (admin["place"], admin["level"]) if admin else ("", "")
    rest = name[admin.end() :] if admin else name
    if (numbered := _NUMBERED.match(rest)) is not None and level:
        n = numbered["n"]
        forms |= {f"{level}{n}院", f"{level}{n}医院", f"{place}{n}院", f"{place}{level}{n}院"}
        forms |= {f"{place}{n}医院"} if len(place) >= 2 else set()
        return forms, guarded
    if rest in _KINDS and level:
        short = _KINDS[rest]
        forms |= {f"{level}{short}", f"{place}{level}{short}"}
        forms |= {f"{place}{short}"} if len(place) >= 2 else set()
        return forms, guarded
    suffix = _SUFFIX.search(name)
    if suffix is None:
        return forms, guarded
    stem = _strip_place(name[: suffix.start()])
    if (whole := _ADMIN.fullmatch(stem)) is not None:  # 某市中心医院 -> 市中心医院, 某中心医院
        forms |= {f"{whole['level']}{suffix[0]}"}
        forms |= {f"{whole['place']}{suffix[0]}"} if len(whole["place"]) >= 2 else set()
        return forms, guarded
    numeral = stem[-1:] in _NUMERAL and len(stem) >= 3
    if len(stem) < 2 or stem in _GENERIC_STEMS or not _HAN.fullmatch(stem):
        return forms, guarded
    with_word = {f"{stem}医院", f"{stem}{suffix[0]}"}
    if numeral:
        with_word.add(f"{stem}院")
    forms |= with_word
    bare = {stem, stem[:-1]} if numeral else {stem}
    for form in bare:
        if len(form) < 2 or form in _GENERIC_STEMS:
            continue
        # A word the dictionary counts often (长寿, 和平, 友谊, 华山) as the stem: only where
        # care is sought there; a rare one (协和, 湘雅) wherever it stands.
        (guarded if word_count(form) >= _EVERYDAY_STEM else forms).add(form)
    return forms, guarded


# ---------------------------------------------------------------- people

_FAMILIAR = "老小阿"
_TITLES = AFTER_TITLES + "|阿姨|姨|叔|伯|哥|姐|总|工|奶奶|爷爷|婆婆|大爷|大妈|某"
# Initials that are clinical abbreviations as well (陈涛 -> CT): never masked as a name.
_CLINICAL_INITIALS = frozenset(
    words(
        "CT MR MRI BP HR RR DR CR PT OT ICU HB HP TB GI ER OR IV IM PO QD BID TID QID PRN "
        "WBC RBC PLT ALT AST GGT TSH LH FSH HPV HIV HBV HCV PE PD PCR CRP ESR BMI DM HT CA CEA "
        "AFP NT TG TC LDL HDL UA BUN EF LV RV LA RA SP DX RX TX HX SX NS GS ST QT PR CK LDH "
        "INR APTT FT BNP HCG OK NO ID QQ WX CC ML MG KG CM MM GB SB DNA RNA TCM USB"
    )
)
_LATIN_EDGE_BEFORE = "(?<![A-Za-z0-9])"
_LATIN_EDGE_AFTER = "(?![A-Za-z0-9])"
_SYLLABLE_JOIN = r"[\s\-'’]?"
_NAME_JOIN = r"[\s\-_.,，]{0,2}"


def _split_name(name: str) -> tuple[str, str] | None:
    """(surname, given) of a Han name; None for anything else."""
    if not _HAN.fullmatch(name) or not 1 <= len(name) <= 4:
        return None
    if name[:2] in COMPOUND_SURNAMES:
        return name[:2], name[2:]
    if SURNAME.match(name) is None:
        return None
    return name[:1], name[1:]


@cache
def _readings(character: str) -> tuple[str, ...]:
    """Every pinyin reading of ``character`` (单: dan, chan, shan), ü written as v, u and yu."""
    from pypinyin import Style, pinyin  # loaded on first use: most consultations need none

    out: list[str] = []
    for reading in pinyin(character, heteronym=True, style=Style.NORMAL)[0]:
        if not reading.isascii() or not reading.isalpha():
            continue
        out.append(reading)
        if "v" in reading:
            out += [reading.replace("v", "u"), reading.replace("v", "yu")]
    return tuple(dict.fromkeys(out))


def _syllables(word: str) -> str:
    parts = []
    for character in word:
        readings = _readings(character)
        if not readings:
            return ""
        parts.append("(?:" + "|".join(readings) + ")")
    return _SYLLABLE_JOIN.join(parts)


def pinyin_pattern(surname: str, given: str) -> str:
    """A case-insensitive pattern for ``surname given`` in pinyin, either order, spaced,
    hyphenated or joined (Zhang Xiuying, XIUYING ZHANG, zhangxiuying, Xiu-ying Zhang)."""
    s, g = _syllables(surname), _syllables(given)
    if not s or not g:
        return ""
    return f"(?i:{_LATIN_EDGE_BEFORE}(?:{s}{_NAME_JOIN}{g}|{g}{_NAME_JOIN}{s}){_LATIN_EDGE_AFTER})"


def initials_pattern(surname: str, given: str) -> str:
    """Upper-case initials of the name (ZXY, Z.X.Y.), unless they spell a clinical
    abbreviation; a name of one given character has none (two letters say too little)."""
    if len(given) < 2:
        return ""
    letters = []
    for character in surname[:1] + given:
        readings = _readings(character)
        if not readings:
            return ""
        letters.append(sorted({r[0].upper() for r in readings}))
    if any(len(choice) > 1 for choice in letters):
        return ""  # a character of several readings: its initial is a guess
    plain = "".join(choice[0] for choice in letters)
    if plain in _CLINICAL_INITIALS:
        return ""
    dotted = r"\.?\s?".join(plain)
    return f"{_LATIN_EDGE_BEFORE}{dotted}\\.?{_LATIN_EDGE_AFTER}"


# An everyday word made of a familiar prefix and a surname (小时, 老师, 小心, 老公): the
# dictionary counts these far more often than any nickname it happens to list (老张 256).
_EVERYDAY_COUNT = 500
# What follows a person's familiar form in a sentence: a particle, a pronoun, a verb of
# saying or doing, punctuation (小张你…, 老王说…); a Han character outside these may run on
# into a word (小叶|增生).
_AFTER_PERSON = frozenset(
    "的了说也都是在和跟与让给叫呢吗啊呀吧嘛你我他她们去来要会就还又没不把被对讲问"
)


def _titled_ok(text: str, start: int, end: int) -> bool:
    """A surname and title at ``[start, end)`` is a person unless the surname ends a word
    with the character before it (主任|医生, 属于|老师) or the title starts one with the
    character after it (周总|结, 李工|作)."""
    before = text[start - 1 : start + 1] if start else ""
    after = text[end - 1 : end + 1] if end < len(text) else ""
    return not any(
        len(pair) == 2 and _HAN.fullmatch(pair) and is_common_word(pair) for pair in (before, after)
    )


def _familiar_ok(text: str, start: int, end: int) -> bool:
    """A familiar form (老张, 小张, 阿英) at ``[start, end)`` is a person: no everyday word
    (小时, 老师), and the sentence goes on after it as after a person (小张你…, 老王说…)."""
    if word_count(text[start:end]) >= _EVERYDAY_COUNT:
        return False
    return end == len(text) or not _HAN_CHAR.match(text[end]) or text[end] in _AFTER_PERSON


Check = Callable[[str, int, int], bool]


def _person_patterns(name: str) -> list[tuple[str, Check | None]]:
    """(pattern, the test each match must pass) for the derived forms of a person's name."""
    split = _split_name(name)
    if split is None:
        return []
    surname, given = split
    out: list[tuple[str, Check | None]] = [(f"{re.escape(surname)}(?:{_TITLES})", _titled_ok)]
    if len(surname) == 1:
        out.append((f"[{_FAMILIAR[:2]}]{surname}", _familiar_ok))
    if len(given) == 1:
        out.append((f"[{_FAMILIAR[1:]}]{given}", _familiar_ok))
    if given:
        for pattern in (pinyin_pattern(surname, given), initials_pattern(surname, given)):
            if pattern:
                out.append((pattern, None))
    return out


# ---------------------------------------------------------------- split numbers

# A number's full length in digits, by the kinds a number is masked as.
_FULL_DIGITS = {
    EntityType.PHONE: frozenset({11}),
    EntityType.ID: frozenset({15, 18}),
}
_LEADING_DIGITS = re.compile(r"^[\s:：]*([0-9](?:[0-9\s\-]{0,16}[0-9Xx])?)")
_TRAILING_DIGITS = re.compile(r"([0-9](?:[0-9\s\-]{0,16}[0-9])?)[\s\-]*$")
_LINE = re.compile(".+")
_LINE_END = re.compile(r"[\s\-，,。.;；]*(?:\n|$)")


def _digits(text: str) -> int:
    return sum(c.isdigit() or c in "Xx" for c in text)


def _split_halves(texts: Sequence[str], spans: Sequence[Sequence[Span]]) -> list[list[Span]]:
    """The other half of a number masked short of its length at the end of a line or turn
    (or at the start of one), read at the start of the next line or turn (or the end of the
    one before) when the two halves make the number's full length."""
    out: list[list[Span]] = [[] for _ in texts]
    lines: list[tuple[int, int, int]] = []  # (turn, start, end) of every non-empty line
    first: list[int] = []  # each turn's first line in ``lines``
    starts: list[list[int]] = []  # each turn's line starts, for bisection
    for turn, text in enumerate(texts):
        first.append(len(lines))
        found_lines = [(turn, m.start(), m.end()) for m in _LINE.finditer(text)]
        lines += found_lines
        starts.append([lo for _, lo, _ in found_lines])
    for turn, text in enumerate(texts):
        for span in spans[turn]:
            full = _FULL_DIGITS.get(span.type)
            if full is None or (have := _digits(span.text)) in full:
                continue
            at = bisect_right(starts[turn], span.start) - 1
            if at < 0:
                continue
            index = first[turn] + at
            lo = lines[index][1]
            if _LINE_END.match(text, span.end) and index + 1 < len(lines):
                n_turn, n_lo, n_hi = lines[index + 1]
                found = _LEADING_DIGITS.match(texts[n_turn][n_lo:n_hi])
                if found and have + _digits(found[1]) in full:
                    a, b = n_lo + found.start(1), n_lo + found.end(1)
                    out[n_turn].append(_span(texts[n_turn], a, b, span.type))
            if not text[lo : span.start].strip() and index > 0:
                p_turn, p_lo, p_hi = lines[index - 1]
                found = _TRAILING_DIGITS.search(texts[p_turn][p_lo:p_hi])
                if found and have + _digits(found[1]) in full:
                    a, b = p_lo + found.start(1), p_lo + found.end(1)
                    out[p_turn].append(_span(texts[p_turn], a, b, span.type))
    return out


# ---------------------------------------------------------------- the step


def _span(text: str, start: int, end: int, kind: EntityType) -> Span:
    return Span(start=start, end=end, type=kind, text=text[start:end], source=SOURCE)


def propagate(
    texts: Sequence[str], spans: Sequence[Sequence[Span]], also: Iterable[Span] = ()
) -> list[list[Span]]:
    """Extra spans, per text, for the derived forms of every entity in ``spans`` (and in
    ``also``: entities masked elsewhere, such as on the consultation's images), none of them
    overlapping a span already masked. ``texts`` are a consultation's turns or OCR lines."""
    entities = [s for turn in spans for s in turn] + list(also)
    plain: set[str] = set()  # hospital forms masked wherever they appear
    guarded: set[str] = set()  # hospital forms masked before a care word
    people: dict[str, Check | None] = {}  # person patterns and the test of each match
    for entity in entities:
        if entity.type is EntityType.HOSPITAL:
            forms, care = hospital_forms(entity.text)
            plain |= forms - {entity.text}
            guarded |= care
        elif entity.type is EntityType.NAME:
            people.update(_person_patterns(entity.text))
    out = _split_halves(texts, spans) if entities else [[] for _ in texts]
    places = [re.escape(f) for f in sorted(plain, key=len, reverse=True)]
    places += [f"{re.escape(f)}(?={_CARE_AFTER})" for f in sorted(guarded)]
    compiled: list[tuple[re.Pattern[str], Check | None, EntityType]] = []
    if places:
        compiled.append((re.compile("|".join(places)), None, EntityType.HOSPITAL))
    for test in dict.fromkeys(people.values()):
        group = [p for p, t in people.items() if t is test]
        compiled.append((re.compile("|".join(group)), test, EntityType.NAME))
    for i, text in enumerate(texts):
        # Characters already masked, one flag each: a match is checked in its own length, so a
        # long text with many spans stays linear.
        taken = bytearray(len(text))
        for s in (*spans[i], *out[i]):
            taken[s.start : s.end] = b"\x01" * (s.end - s.start)
        for pattern, test, kind in compiled:
            for match in pattern.finditer(text):
                start, end = match.span()
                if start == end or any(taken[start:end]):
                    continue
                if test is not None and not test(text, start, end):
                    continue
                out[i].append(_span(text, start, end, kind))
                taken[start:end] = b"\x01" * (end - start)
    return out
