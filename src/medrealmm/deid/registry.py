"""The recognizer registry: one small recognizer per identifier type, as Presidio does it.

A recognizer is anything with a ``name`` and ``find(text) -> Iterable[Span]``. Adding a type
means registering one more object; the text pass asks the registry for all of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from medrealmm.deid.spans import EntityType, Span


class Recognizer(Protocol):
    name: str

    def find(self, text: str) -> Iterable[Span]: ...


_REGISTRY: dict[str, Recognizer] = {}


def register(recognizer: Recognizer) -> Recognizer:
    if recognizer.name in _REGISTRY and _REGISTRY[recognizer.name] is not recognizer:
        raise ValueError(f"recognizer {recognizer.name!r} registered twice")
    _REGISTRY[recognizer.name] = recognizer
    return recognizer


def recognizers() -> list[Recognizer]:
    # Importing the modules registers their recognizers.
    from medrealmm.deid import names, patterns  # noqa: F401

    return list(_REGISTRY.values())


def get_recognizer(name: str) -> Recognizer:
    recognizers()
    return _REGISTRY[name]


Validator = Callable[[re.Match[str]], EntityType | None]


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
    tags: list[str] = field(default_factory=list)

    def find(self, text: str) -> Iterator[Span]:
        for pattern in self.patterns:
            for match in pattern.finditer(text):
                kind = self.validate(match) if self.validate else self.type
                if kind is None:
                    continue
                start, end = match.span(self.group)
                if end > start:
                    yield Span(
                        start=start, end=end, type=kind, text=text[start:end], source=self.name
                    )
