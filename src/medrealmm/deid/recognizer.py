"""What a recognizer is: anything with a ``name`` and ``find(text) -> Iterable[Span]``.

The regex-backed kind is defined here so the modules holding patterns depend on this small
module only; which recognizers run is decided in one list in ``registry``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from medrealmm.deid.spans import EntityType, Span


class Recognizer(Protocol):
    """``find`` is the contract. A recognizer backed by a model may also offer
    ``prepare(texts)``, which ``text.find_spans_in`` calls first so the model sees a whole
    consultation in one batch; one with a cheap refusal may offer ``find_in(texts)`` (see
    ``find_each``)."""

    name: str

    def find(self, text: str) -> Iterable[Span]: ...


Validator = Callable[[re.Match[str]], EntityType | None]


def starts_with_one_of(*alternations: str) -> str:
    """A lookahead for the first characters of ``|``-separated plain words. Put in front
    of a pattern whose every match starts with one of them, it changes no match but lets
    the scan pass any other position with one check instead of one per word."""
    firsts = {word[0] for alternation in alternations for word in alternation.split("|") if word}
    return "(?=[" + "".join(re.escape(c) for c in sorted(firsts)) + "])"


def gated(gate: re.Pattern[str], pattern: re.Pattern[str], text: str) -> Iterable[re.Match[str]]:
    """``pattern.finditer(text)`` when ``gate`` (a cheap scan for something every match of
    ``pattern`` holds) finds it, else nothing: the same matches, and a text without the gate's
    words costs one fast scan instead of a slow one."""
    return pattern.finditer(text) if gate.search(text) is not None else ()


Found = list[tuple[int, list[Span]]]


def find_each(recognizer: Recognizer, texts: Sequence[str]) -> Found:
    """``recognizer.find`` over ``texts``, as (index, spans) for the texts with spans: one
    recognizer over a whole window, through its ``find_in`` when it has one."""
    find_in = getattr(recognizer, "find_in", None)
    if find_in is not None:
        return find_in(texts)
    find = recognizer.find
    return [(i, spans) for i, text in enumerate(texts) if (spans := list(find(text)))]


@dataclass
class RegexRecognizer:
    """Regex candidates, each kept only if ``validate`` returns a type for it.

    ``group`` selects the part of the match that is the identifier (a keyword before it is
    context, not PII).
    """

    name: str
    type: EntityType
    patterns: list[re.Pattern[str]]
    validate: Validator | None = None
    group: int | str = 0
    # With an anchor (a cheap pattern every match must contain, such as 医院 or 路), the full
    # pattern runs only in windows ``reach`` characters around the anchors.
    anchor: re.Pattern[str] | None = None
    reach: tuple[int, int] = (24, 40)
    # A text without a match for ``gate`` (say, no run of 7 digits) is skipped outright.
    gate: re.Pattern[str] | None = None

    def windows(self, text: str) -> list[tuple[int, int]]:
        if self.anchor is None:
            return [(0, len(text))]
        out: list[tuple[int, int]] = []
        for match in self.anchor.finditer(text):
            lo = max(0, match.start() - self.reach[0])
            hi = min(len(text), match.end() + self.reach[1])
            if out and lo <= out[-1][1]:
                out[-1] = (out[-1][0], hi)
            else:
                out.append((lo, hi))
        return out

    def find(self, text: str) -> list[Span]:
        if self.gate is not None and self.gate.search(text) is None:
            return []
        return self._find(text)

    def find_in(self, texts: Sequence[str]) -> Found:
        """``find`` over a window of texts: most texts fail the gate, and a refusal here is
        one C call in a loop, not a method call per text and recognizer."""
        find = self._find
        if self.gate is None:
            return [(i, spans) for i, text in enumerate(texts) if (spans := find(text))]
        search = self.gate.search
        return [
            (i, spans)
            for i, text in enumerate(texts)
            if search(text) is not None and (spans := find(text))
        ]

    def _find(self, text: str) -> list[Span]:
        # A plain list, the loops inline: it runs for every text and recognizer, and most
        # runs find nothing, so a generator (or a nested one per window) was a good part of
        # the cost.
        found: list[Span] = []
        windows = self.windows(text) if self.anchor is not None else ((0, len(text)),)
        for lo, hi in windows:
            for pattern in self.patterns:
                for match in pattern.finditer(text, lo, hi):
                    if match.end() == match.start():
                        continue
                    kind = self.validate(match) if self.validate else self.type
                    if kind is None:
                        continue
                    start, end = match.span(self.group)
                    if end > start:
                        found.append(
                            Span(
                                start=start,
                                end=end,
                                type=kind,
                                text=text[start:end],
                                source=self.name,
                            )
                        )
        return found
