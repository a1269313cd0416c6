"""Labelled fields: the value after an identifier label, whatever its shape.

A form, a record or a slip says what each value is: 床号 12, 病理号：B2023-00029, HN No.
12345678, 工號 A0321, Name: WU MINGYUAN. The label is the evidence, so the value is masked
without a shape rule of its own. The labels live in one data file reviewed like code
(``identifier_labels.yaml``: every kind with its placeholder, in the four locales); a label
with no identifier kind (诊断, 科室, 剂量 …) is listed there too: its value is never masked
here, and in a form it ends the value before it (姓名：张三 性别：男).

Layouts: ``LABEL[号/No./#][:：是为]VALUE`` inline; the bed number before 床 (12床, 3号床); a
form header laid out as a table row (labels split by ``|``, tabs or two blanks) whose values
stand in the same columns of the next row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml

from medrealmm.deid.reading import fold
from medrealmm.deid.recognizers.common import common_word
from medrealmm.deid.spans import EntityType, Span

NAME = "labelled_field"


@dataclass(frozen=True)
class Kind:
    name: str
    type: EntityType
    value: str  # code | name | date


@dataclass(frozen=True)
class Labels:
    by_label: dict[str, Kind]  # folded, lower-cased label -> its kind
    not_identifiers: frozenset[str]
    pattern: re.Pattern[str]  # any label, identifier or not, longest first
    gate: re.Pattern[str]


def _key(label: str) -> str:
    return fold(label).lower()


@cache
def labels() -> Labels:
    """The label table, read once: labels folded as the reading folds them (traditional as
    simplified), so each locale's form matches the canonical reading."""
    raw = yaml.safe_load(
        (resources.files("medrealmm.deid.recognizers") / "identifier_labels.yaml").read_text(
            encoding="utf-8"
        )
    )
    by_label: dict[str, Kind] = {}
    for name, spec in raw["kinds"].items():
        kind = Kind(name, EntityType[spec["type"]], spec["value"])
        for label in spec["labels"]:
            by_label.setdefault(_key(str(label)), kind)
    not_ids = frozenset(_key(str(label)) for label in raw["not_identifiers"]) - set(by_label)
    every = {*by_label, *not_ids}
    # One trie-shaped alternation (shared prefixes written once) behind a lookahead for the
    # first characters: with hundreds of labels a flat alternation tries each at every
    # position and was most of the text pass's rule time.
    firsts = sorted({c for label in every for c in {label[0], label[0].upper()}})
    lead = "(?=[" + "".join(re.escape(c) for c in firsts) + "])"
    pattern = re.compile(rf"{lead}(?<![A-Za-z])(?:{_trie(sorted(every))})(?![a-z])", re.IGNORECASE)
    gate = re.compile("[" + "".join(re.escape(c) for c in firsts) + "]")
    return Labels(by_label, not_ids, pattern, gate)


def _trie(words: list[str]) -> str:
    """A regex matching any of ``words``, longest first, written as a trie: ``病理号|病理编号``
    as ``病理(?:号|编号)``. A blank inside a label matches an optional blank."""
    tree: dict[str, dict] = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def walk(node: dict[str, dict]) -> str:
        branches = []
        for char in sorted((c for c in node if c), key=lambda c: -_depth(node[c])):
            piece = r"\s?" if char == " " else re.escape(char)
            branches.append(piece + walk(node[char]))
        if not branches:
            return ""
        body = "|".join(branches)
        optional = "" in node
        if len(branches) == 1 and not optional:
            return branches[0] if len(branches[0]) <= 2 else f"(?:{body})"
        return f"(?:{body})" + ("?" if optional else "")

    return walk(tree)


def _depth(node: dict[str, dict]) -> int:
    return 1 + max((_depth(child) for key, child in node.items() if key), default=0)


# After the label: a number word (号, 编号, No.) or a hash, then a colon or a copula.
_AFTER = re.compile(
    r"(?P<num>号码|号|编号|码|No\.?|NO\.?|no\.?|#)?[ \t]*(?P<sep>[:：=]|是|为)?[ \t]*"
    r"(?:(?:No\.?|NO\.?|#)[ \t]*)?(?P<nl>\n[ \t]*)?"
)
# A code, with Taiwan's word prefix and counter when it has them (醫字第012345號).
_CODE = re.compile(
    r"(?:[\u4e00-\u9fff]{1,3}字)?第?[A-Za-z0-9][A-Za-z0-9\-_/.#()（）]{0,39}(?:(?<=\d)号)?"
)
_HAN_NAME = re.compile(r"[\u4e00-\u9fff]{2,6}(?:[·.•][\u4e00-\u9fff]{1,10})?")
_LATIN_NAME = re.compile(r"[A-Za-z][A-Za-z'\-]*(?:[ .][A-Za-z][A-Za-z'\-]*){0,3}")
_DATE = re.compile(
    r"(?:19|20)?\d{2}[-./年]\d{1,2}(?:[-./月]\d{1,2}[日号]?)?|\d{1,2}[-./]\d{1,2}[-./](?:19|20)\d{2}"
)
# Values that say nothing about anyone.
_EMPTY = frozenset({"无", "不详", "未知", "暂无", "本人", "见上", "同上", "男", "女", "空"})
_BED = re.compile(
    r"(?<![0-9A-Za-z.])(?:加)?\d{1,3}[A-Za-z]?\s?(?:号床|床)(?![位边旁头尾上下单被棉毯褥垫])"
)
_CELL_SPLIT = re.compile(r"[ \t]*[|｜\t][ \t]*|[ \t]{2,}")


class LabelledFieldRecognizer:
    """Values after identifier labels (``identifier_labels.yaml``), inline or in a table."""

    name = NAME

    def find(self, text: str) -> list[Span]:
        table = labels()
        found: list[Span] = []
        if table.gate.search(text) is not None:
            found.extend(self._inline(text, table))
            if "\n" in text:
                found.extend(self._tables(text, table))
        if "床" in text:
            for match in _BED.finditer(text):
                found.append(_span(text, match.start(), match.end(), EntityType.MRN))
        return found

    def _inline(self, text: str, table: Labels) -> Iterator[Span]:
        for match in table.pattern.finditer(text):
            kind = table.by_label.get(re.sub(r"\s", " ", match.group(0)).lower())
            if kind is None:
                continue
            after = _AFTER.match(text, match.end())
            assert after is not None  # every part of it is optional
            # A name needs a colon or a copula: 患者 and 医师 start many sentences.
            if kind.value == "name" and not after.group("sep"):
                continue
            end = _value_end(text, after.end(), kind, table)
            if end is not None:
                yield _span(text, after.end(), end, kind.type)

    def _tables(self, text: str, table: Labels) -> Iterator[Span]:
        lines = text.split("\n")
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line) + 1)
        for row, line in enumerate(lines[:-1]):
            header = _cells(line)
            if len(header) < 2:
                continue
            keys = [_key(cell).rstrip(":：") for _, cell in header]
            if not all(k in table.by_label or k in table.not_identifiers for k in keys):
                continue
            if not any(k in table.by_label for k in keys):
                continue
            values = _cells(lines[row + 1])
            if len(values) != len(header):
                continue
            for key, (at, cell) in zip(keys, values, strict=True):
                kind = table.by_label.get(key)
                if kind is not None and cell and cell not in _EMPTY:
                    start = offsets[row + 1] + at
                    yield _span(text, start, start + len(cell), kind.type)


def _cells(line: str) -> list[tuple[int, str]]:
    """``line``'s cells with their offsets: split at bars, tabs and runs of two blanks."""
    out: list[tuple[int, str]] = []
    at = 0
    stripped = line.strip(" \t|｜")
    lead = line.index(stripped) if stripped else 0
    for part in _CELL_SPLIT.split(stripped):
        pos = stripped.index(part, at) if part else at
        if part:
            out.append((lead + pos, part))
        at = pos + len(part)
    return out


def _value_end(text: str, start: int, kind: Kind, table: Labels) -> int | None:
    """Where the value of ``kind`` starting at ``start`` ends, or None when none is there."""
    if kind.value == "code":
        match = _CODE.match(text, start)
        if match is None or not any(c.isdigit() for c in match.group(0)):
            return None
        return start + len(match.group(0).rstrip(".-/#"))
    if kind.value == "date":
        match = _DATE.match(text, start)
        return match.end() if match is not None else None
    match = _HAN_NAME.match(text, start) or _LATIN_NAME.match(text, start)
    if match is None:
        return None
    value = match.group(0)
    # The next label ends the value (姓名张三性别男, Name: WU MING DOB ...).
    inner = table.pattern.search(value, 1)
    if inner is not None:
        value = value[: inner.start()].rstrip(" .")
    if len(value) < 2 or value in _EMPTY or (value.isascii() and len(value) > 40):
        return None
    # A word or a status (未填, 已阅, 见附件, 待补), not a name: no surname starts so.
    if not value.isascii() and (value[0] in "未待已见不无暂详" or common_word(value)):
        return None
    return start + len(value)


def _span(text: str, start: int, end: int, kind: EntityType) -> Span:
    return Span(start=start, end=end, type=kind, text=text[start:end], source=NAME)


LABELLED_FIELD = LabelledFieldRecognizer()
