"""The canonical reading: the one text every recognizer reads, with a map back to the original.

People hide an identifier from a filter, or from nobody in particular, by the way they write it:
``１３８ 1234 5678``, ``138-1234-5678``, ``1⃣3⃣8⃣…``, ``幺三八洞洞…`` (spoken digits), a
zero-width space inside a name, ``w x i d _ a b c`` letter by letter, a number broken over two
lines. Teaching each recognizer every one of these is how a family gets missed; instead the text
is read once into a canonical form and every recognizer reads that:

1. one for one: traditional characters as simplified, full-width ASCII as ASCII, circled and
   keycap digits as digits;
2. format characters (zero-width spaces and joiners, soft hyphens, variation selectors, keycap
   marks, bidi controls) removed;
3. inside a run of at least seven digits, spoken and Chinese numerals read as digits
   (幺=1, 洞/〇/零=0, 两=2, 拐=7, 勾=9, 一…九 and their banker's forms);
4. separators between the digit groups of such a run dropped (spaces, dashes, dots, middle dots,
   underscores, emoji and other symbols), unless the run is laid out as a date, an IP address,
   a decimal or a two-number range; a line break too, where one side of it is a fragment
   (a number continued on the next line);
5. letters and digits spelled one at a time with blanks between (``w x 1 2 3``) joined.

The reading is never longer than the text, and ``origin[i]`` is the index in the original of
reading character ``i`` (increasing), so a span found in the reading maps back to the original
characters exactly with ``to_original``: the separators it crossed are masked with it. A text
with nothing to fold costs a few scans and returns itself with ``range`` as its map.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from functools import cache, lru_cache
from importlib import resources
from typing import NamedTuple

from medrealmm.deid.checksum import is_resident_id


class Reading(NamedTuple):
    """``canonical_reading``'s result; unpacks as ``(text, origin)``."""

    text: str
    #: ``origin[i]``: index in the original text of ``text[i]``; increasing.
    origin: Sequence[int]

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """The original characters of reading characters ``start:end`` (end exclusive),
        with any removed separator between them."""
        return to_original(self.origin, start, end)

    def to_reading(self, start: int, end: int) -> tuple[int, int]:
        """The reading characters that come from original characters ``start:end``."""
        return bisect_left(self.origin, start), bisect_left(self.origin, end)


def to_original(origin: Sequence[int], start: int, end: int) -> tuple[int, int]:
    """``Reading.to_original`` for a bare map."""
    if end <= start:
        at = origin[start] if start < len(origin) else (origin[-1] + 1 if origin else 0)
        return at, at
    return origin[start], origin[end - 1] + 1


# -- 1. one for one ---------------------------------------------------------------------------

# Full-width digits, letters and the symbols inside identifiers (１３８…, ＠, ．) read as ASCII.
# Chinese punctuation (：，（）) is left alone; the rules read it as it is.
_HALF_WIDTH = (
    {c: c - 0xFEE0 for c in range(0xFF10, 0xFF1A)}
    | {
        c: c - 0xFEE0
        for c in [*range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B), 0xFF0B, 0xFF0D, 0xFF0E]
    }
    | {0xFF0F: ord("/"), 0xFF20: ord("@"), 0x3000: ord(" ")}
)
# Circled and negative-circled digits (①, ❶, ➀ …) and the digit zero of each.
_CIRCLED = (
    {0x2460 + i: ord("1") + i for i in range(9)}
    | {0x2776 + i: ord("1") + i for i in range(9)}
    | {0x2780 + i: ord("1") + i for i in range(9)}
    | {0x278A + i: ord("1") + i for i in range(9)}
    | {0x24EA: ord("0"), 0x24FF: ord("0"), 0x1F10B: ord("0"), 0x1F10C: ord("0")}
)


def _simplified() -> dict[int, int]:
    """Traditional characters to their simplified form, one for one (OpenCC's character
    table; where it gives several, the first). Hong Kong, Macau and Taiwan write 陳醫生 and
    顏美麗: read as 陈医生 and 颜美丽, every rule and the model (trained on simplified text)
    know them without a traditional twin of each list."""
    table = resources.files("opencc") / "dictionary" / "TSCharacters.txt"
    out: dict[int, int] = {}
    for line in table.read_text(encoding="utf-8").splitlines():
        key, _, values = line.partition("\t")
        value = values.split(" ", 1)[0]
        # Only into the basic block the recognizers' Han class holds (輋 stays 輋, not 𪨶).
        if len(key) == 1 and len(value) == 1 and key != value and "\u4e00" <= value <= "\u9fff":
            out[ord(key)] = ord(value)
    return out


@cache
def _one_for_one() -> tuple[dict[int, int], frozenset[str]]:
    """The character map of step 1 and the characters it maps: most texts hold none, and a
    set's ``isdisjoint`` finds that several times faster than ``str.translate`` does."""
    table = _simplified() | _HALF_WIDTH | _CIRCLED
    return table, frozenset(map(chr, table))


def fold(text: str) -> str:
    """Step 1 alone (one character for one, so offsets hold): traditional as simplified,
    full-width as ASCII, circled digits as digits."""
    table, mapped = _one_for_one()
    return text if mapped.isdisjoint(text) else text.translate(table)


# -- 2. format characters --------------------------------------------------------------------

_FORMAT = re.compile(
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufe00-\ufe0f\u20e3]"
)

# -- 3 and 4. digit runs ---------------------------------------------------------------------

_SPOKEN = {
    "〇": "0",
    "零": "0",
    "洞": "0",
    "一": "1",
    "幺": "1",
    "壹": "1",
    "二": "2",
    "两": "2",
    "贰": "2",
    "三": "3",
    "叁": "3",
    "四": "4",
    "肆": "4",
    "五": "5",
    "伍": "5",
    "六": "6",
    "陆": "6",
    "七": "7",
    "拐": "7",
    "柒": "7",
    "八": "8",
    "捌": "8",
    "九": "9",
    "勾": "9",
    "玖": "9",
}
_NUMERAL = "0-9" + "".join(_SPOKEN)
# What stands between the digit groups of a number someone spaced out or disguised: blanks,
# dashes, dots, middle dots, underscores, stars as bullets are not (a starred number is
# masked as such), and any symbol or emoji (So, Sk) one character at a time.
_SEP_CHARS = (
    " \t\u00a0\u202f\u205f"
    + "".join(map(chr, range(0x2002, 0x200B)))
    + "-\u2212"
    + "".join(map(chr, range(0x2010, 0x2016)))
    + "._·•・‧∙⋅~～|"
)
_SEP = (
    rf"(?:[ \t]*\r?\n[ \t]*"
    rf"|(?:[{re.escape(_SEP_CHARS)}]|[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF]){{1,3}})"
)
_RUN = re.compile(rf"(?<![0-9A-Za-z.])[{_NUMERAL}](?:(?:{_SEP})?[{_NUMERAL}])+")
# A gate: seven digits (or numerals) with at most separators between, the least any run has.
_RUN_GATE = re.compile(rf"[{_NUMERAL}](?:(?:{_SEP})?[{_NUMERAL}]){{6}}")
_GROUP = re.compile(rf"[{_NUMERAL}]+")
# A date laid out with separators, anywhere in a run (2021-07-0908:15 runs a time on).
_DATE_SEP = re.compile(
    r"(?:19|20)\d{2}([.\-/ ])(?:0?[1-9]|1[0-2])\1(?:0?[1-9]|[12]\d|3[01])"
    r"|(?:0?[1-9]|[12]\d|3[01])([.\-/ ])(?:0?[1-9]|1[0-2])\2(?:19|20)\d{2}"
)
_IP_LIKE = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_MIN_DIGITS = 7
_MAX_DIGITS = 24

# -- 5. spelled letters ----------------------------------------------------------------------

# (with a letter among them: digits alone are step 4's)
_SPELLED_GATE = re.compile(r"[0-9A-Za-z][ ·\-][0-9A-Za-z][ ·\-][0-9A-Za-z][ ·\-][0-9A-Za-z]")
_SPELLED = re.compile(
    r"(?<![0-9A-Za-z])(?=(?:[0-9][ ·\-])*[A-Za-z])"
    r"[0-9A-Za-z](?:[ ·\-][0-9A-Za-z]){3,}(?![0-9A-Za-z])"
)


class _Edits:
    """Pending edits to one string: characters to drop and characters to replace."""

    def __init__(self) -> None:
        self.drop: set[int] = set()
        self.put: dict[int, str] = {}

    def __bool__(self) -> bool:
        return bool(self.drop or self.put)

    def apply(self, text: str, origin: Sequence[int]) -> tuple[str, list[int]]:
        chars: list[str] = []
        where: list[int] = []
        drop, put = self.drop, self.put
        for i, c in enumerate(text):
            if i in drop:
                continue
            chars.append(put.get(i, c))
            where.append(origin[i])
        return "".join(chars), where


_LINE_SEP = re.compile(r"[ \t]*\r?\n[ \t]*")


def _digit_runs(text: str, edits: _Edits) -> None:
    """Steps 3 and 4 over ``text`` (format characters already gone)."""
    for match in _RUN.finditer(text):
        for lo, hi in _pieces(match.group(0)):
            _digit_run(text, match.start() + lo, match.start() + hi, edits)


def _pieces(run: str) -> list[tuple[int, int]]:
    """``run`` cut at its line breaks, two lines joined only where one is a fragment (under
    seven digits): it joins the line before unless that is a date or an IP address, else the
    line after. Two whole numbers on two lines stay two."""
    cuts = [(m.start(), m.end()) for m in _LINE_SEP.finditer(run)]
    out: list[tuple[int, int]] = []
    lo = 0
    for start, end in [*cuts, (len(run), len(run))]:
        if out and (
            _count(run, *out[-1]) < _MIN_DIGITS
            or (_count(run, lo, start) < _MIN_DIGITS and not _laid_out(run[slice(*out[-1])]))
        ):
            out[-1] = (out[-1][0], start)
        else:
            out.append((lo, start))
        lo = end
    return out


def _laid_out(piece: str) -> bool:
    read = "".join(_SPOKEN.get(c, c) for c in piece)
    return _DATE_SEP.search(read) is not None or _IP_LIKE.match(read) is not None


def _count(run: str, lo: int, hi: int) -> int:
    return sum(1 for c in run[lo:hi] if "0" <= c <= "9" or c in _SPOKEN)


_NUMERALS_ONLY = "".join(_SPOKEN)
_EDGE_HEAD = re.compile(rf"[{_NUMERALS_ONLY}]{{1,2}}(?:{_SEP})?(?=[0-9])")
_EDGE_TAIL = re.compile(rf"(?<=[0-9])(?:{_SEP})?[{_NUMERALS_ONLY}]{{1,2}}$")
# A short group after a blank, then a word: a count (… 5678 3天后), not the number's tail.
_COUNT_TAIL = re.compile(r"\s+\d{1,2}$")


def _digit_run(text: str, lo: int, hi: int, edits: _Edits) -> None:
    run = text[lo:hi]
    if any("0" <= c <= "9" for c in run):
        # Numerals at the edge of Arabic digits are words (张三1380…, …8000 三天后, 第四1861…).
        head = _EDGE_HEAD.match(run)
        if head is not None:
            lo += head.end()
            run = text[lo:hi]
        tail = _EDGE_TAIL.search(run)
        if tail is not None:
            hi = lo + tail.start()
            run = text[lo:hi]
    tail = _COUNT_TAIL.search(run)
    if tail is not None and hi < len(text) and "\u4e00" <= text[hi] <= "\u9fff":
        hi = lo + tail.start()
        run = text[lo:hi]
    groups = _GROUP.findall(run)
    digits = sum(map(len, groups))
    if not _MIN_DIGITS <= digits <= _MAX_DIGITS:
        return
    spoken = any(c in _SPOKEN for c in run)
    if spoken and not _numerals_read_as_digits(run, groups):
        return
    # One 一 between Arabic digits is a dash drawn with the Chinese keyboard (139一2345一6789).
    dashes = {k for k, c in enumerate(run) if c == "一" and 0 < k < len(run) - 1}
    dashes = {k for k in dashes if run[k - 1].isascii() and run[k + 1].isascii()}
    read = "".join("-" if k in dashes else _SPOKEN.get(c, c) for k, c in enumerate(run))
    if dashes:
        groups = re.findall(r"\d+", read)
    if len(groups) > 1 and not _keep_separators(text, lo, read, groups):
        for k, c in enumerate(read):
            if not "0" <= c <= "9":
                edits.drop.add(lo + k)
    for k, c in enumerate(run):
        if c in _SPOKEN and k not in dashes:
            edits.put[lo + k] = _SPOKEN[c]


def _numerals_read_as_digits(run: str, groups: list[str]) -> bool:
    """Chinese numerals are digits here when they run on (four in a row) or sit among Arabic
    digits, not a count in a sentence."""
    return any("0" <= c <= "9" for c in run) or max(map(len, groups)) >= 4


# Separators of a layout (blanks, dashes, dots); the others (middle dots, bullets, underscores,
# tildes, bars, symbols, emoji) stand between digits only to hide a number.
_LAYOUT_SEP = frozenset(" \t\u00a0\u202f\u205f.-\u2212" + "".join(map(chr, range(0x2002, 0x2016))))


def _whole_identifier(digits: str) -> bool:
    """Digits that are a resident ID (its checksum and birth date), however grouped: the
    grouping then is a disguise or a card-like print (4403 0419 8805 1230 17)."""
    return len(digits) in (15, 18) and is_resident_id(digits.upper())


def _keep_separators(text: str, lo: int, read: str, groups: list[str]) -> bool:
    """A run laid out as something the recognizers read with its separators: a date
    (2023.05.06, 06-05-2023), an IP address, two numbers (a range, an area code and its
    number), a phone after an area code in brackets or an international prefix, dotted groups
    (decimals, versions, a dotted phone layout), decimals and ranges in a list (3.5-5.5 120-300:
    two kinds of separator), numbers in a table (120 80 72: no group of four), a card printed
    in fours. Never when the digits are a resident ID (``_whole_identifier``),
    nor with a symbol, emoji or middle dot between digits: that is there to hide the number."""
    seps = re.split(r"\d+", read)[1:-1]
    if any(c not in _LAYOUT_SEP and not c.isspace() for sep in seps for c in sep):
        return False
    if _DATE_SEP.search(read) or _IP_LIKE.match(read):
        return True
    check = "X" if text[lo + len(read) : lo + len(read) + 1] in ("X", "x") else ""
    if _whole_identifier("".join(groups) + check):
        return False
    if len(groups) == 2:
        # Two numbers, unless a line break cut one: a fragment on either side of it.
        return "\n" not in seps[0] or min(map(len, groups)) >= _MIN_DIGITS
    before = text[max(0, lo - 2) : lo].rstrip()
    if before.endswith(("+", ")", "）")) or read.startswith("00"):
        return True
    # A line break is where the writer ran out of room, not a kind of layout.
    kinds = {"space" if sep.isspace() else sep.strip() for sep in seps if "\n" not in sep}
    if len(kinds) > 1 or kinds == {"."}:
        return True
    lengths = [len(g) for g in groups]
    if kinds == {"-"} and len(groups) == 3 and sum(lengths) < 10:
        return True  # building-unit-room (40-4-2602), a code: a phone has ten digits or more
    if max(lengths) == 1:
        return sum(lengths) < 8  # digits spelled one by one: a phone's eight or more
    if len(groups) >= 4 and set(lengths[:-1]) == {4}:
        return True
    return max(lengths) < 4


@lru_cache(maxsize=4096)
def canonical_reading(text: str) -> Reading:
    """``text`` as every recognizer reads it (see the module docstring) and its map back.

    ``reading, origin = canonical_reading(text)``; a span ``start:end`` of ``reading`` is
    ``text[origin[start] : origin[end - 1] + 1]`` (``to_original``). Linear in the text; a
    text with nothing to fold returns ``(text, range(len(text)))``. Cached: the text pass,
    the model's batch and the consistency step read the same turns.
    """
    plain = fold(text)
    origin: Sequence[int] = range(len(text))
    if _FORMAT.search(plain) is not None:
        edits = _Edits()
        edits.drop.update(m.start() for m in _FORMAT.finditer(plain))
        plain, origin = edits.apply(plain, origin)
    if _RUN_GATE.search(plain) is not None:
        edits = _Edits()
        _digit_runs(plain, edits)
        if edits:
            plain, origin = edits.apply(plain, origin)
    if _SPELLED_GATE.search(plain) is not None:
        edits = _Edits()
        for match in _SPELLED.finditer(plain):
            for k, c in enumerate(match.group(0)):
                if not c.isalnum():
                    edits.drop.add(match.start() + k)
        if edits:
            plain, origin = edits.apply(plain, origin)
    return Reading(plain, origin)
