"""Given names of one character in a story (盈讨厌婷…): the model tags some mentions of a
character's name but the vetoes drop every one-character span, since one character alone is
as often a word. A character the model took for a person that then recurs bare, with no
dictionary word across either edge, three times or more, is the story's character: each of
those bare mentions is masked."""

from __future__ import annotations

from collections.abc import Iterator

from medrealmm.deid.names import NAME_STOP, not_a_given_name, word_tag
from medrealmm.deid.spans import EntityType, Span, words

_MIN_MENTIONS = 3
# Tags a one-character given name never carries as a word of its own: function words,
# interjections, verbs and measure words (怒 in [怒], 唉, 于).
_NOT_GIVEN_TAGS = frozenset(words("p c u d r y e o m q f v vn vg zg uj ul ud uz ug uv"))
# Emoji codes and quoting brackets around a character ([怒]) make it no mention of a person.
_CODE_EDGES = set("[]【】《》<>@#")


def _bare(text: str, i: int) -> bool:
    """``text[i]`` is a mention on its own: no dictionary word ends or starts across it."""
    if (i > 0 and text[i - 1] in _CODE_EDGES) or text[i + 1 : i + 2] in _CODE_EDGES:
        return False
    left = i > 0 and word_tag(text[i - 1 : i + 1]) is not None
    right = word_tag(text[i : i + 2]) is not None
    return not (left or right)


def story_names(text: str, tagged: list[int], source: str) -> Iterator[Span]:
    """NAME spans for the bare mentions of each one-character person at ``tagged`` (offsets
    the model tagged alone and the vetoes dropped) that recurs bare ``_MIN_MENTIONS`` times."""
    for char in dict.fromkeys(text[i] for i in tagged):
        if not "\u4e00" <= char <= "\u9fff" or char in NAME_STOP:
            continue
        if not_a_given_name(char, stops=False) or word_tag(char) in _NOT_GIVEN_TAGS:
            continue
        mentions = [i for i, c in enumerate(text) if c == char and _bare(text, i)]
        if len(mentions) >= _MIN_MENTIONS:
            for i in mentions:
                yield Span(start=i, end=i + 1, type=EntityType.NAME, text=char, source=source)
