"""Names in a list of names (examples written here): an item left unmasked between masked
names is a person too; lists of other things, lists where names are few, and dictionary or
clinical words in a list of names stay as they are."""

from __future__ import annotations

import re

import pytest

from medrealmm.deid.listed_names import listed_names
from medrealmm.deid.names import name_span
from medrealmm.deid.spans import EntityType, Span
from medrealmm.deid.text import find_spans, screen_spans


def _names(text: str, *values: str) -> list[Span]:
    """NAME spans over the first occurrence of each value, as recognizers would give them."""
    out = []
    for value in values:
        match = re.search(re.escape(value), text)
        assert match is not None
        out.append(name_span(text, match.start(), match.end(), "test"))
    return out


def _found(text: str, *named: str) -> list[str]:
    return [s.text for s in listed_names(text, _names(text, *named))]


@pytest.mark.parametrize(
    ("text", "named", "found"),
    [
        # 、 joins: the items between masked names, whatever their shape
        (
            "到场的有柏思远、雷朵朵、阮嘉禾、葵衣、桑一鸣。",
            ("柏思远", "雷朵朵", "桑一鸣"),
            ["阮嘉禾", "葵衣"],
        ),
        # the list's first and last items run into other words; the names meet the joints
        ("昨天和柏思远、墨白、雷朵朵一起吃饭", ("柏思远", "雷朵朵"), ["墨白"]),
        # commas join short items
        ("投给了柏思远，雷朵朵，葵衣，桑一鸣这一组", ("柏思远", "雷朵朵", "桑一鸣"), ["葵衣"]),
        # a short item standing alone at the list's end
        ("感谢柏思远、雷朵朵、葵衣", ("柏思远", "雷朵朵"), ["葵衣"]),
    ],
)
def test_items_of_a_list_of_names_are_names(
    text: str, named: tuple[str, ...], found: list[str]
) -> None:
    assert _found(text, *named) == found


@pytest.mark.parametrize(
    ("text", "named"),
    [
        # names are fewer than the other items
        ("买了苹果、香蕉、葵衣、柏思远、雷朵朵、梨子、芒果", ("柏思远", "雷朵朵")),
        # one name only
        ("柏思远、墨白、葵衣", ("柏思远",)),
        # dictionary words and clinical terms stay, even among names
        ("柏思远、雷朵朵、医生、桑一鸣", ("柏思远", "雷朵朵", "桑一鸣")),
        # a clause break ends a list; a long clause is no item
        ("柏思远、雷朵朵。葵衣来了", ("柏思远", "雷朵朵")),
        ("柏思远，雷朵朵，我们明天一起去医院吧，好吗", ("柏思远", "雷朵朵")),
        # items with letters or digits are no names of this kind
        ("柏思远、雷朵朵、A组、桑一鸣", ("柏思远", "雷朵朵", "桑一鸣")),
    ],
)
def test_other_items_stay(text: str, named: tuple[str, ...]) -> None:
    assert _found(text, *named) == []


def test_a_masked_item_of_another_type_is_not_masked_again() -> None:
    text = "柏思远、雷朵朵、葵衣、桑一鸣"
    spans = [*_names(text, "柏思远", "雷朵朵", "桑一鸣")]
    place = Span(start=8, end=10, type=EntityType.ADDRESS, text=text[8:10], source="test")
    assert listed_names(text, [*spans, place]) == []


def test_the_text_pass_masks_the_listed_name() -> None:
    spans = find_spans("参加会议的有邹晴、顾长林、一苇、潘雪。")
    listed = [s for s in spans if s.source == "name_list"]
    assert [s.text for s in listed] == ["一苇"]
    assert all(s.type is EntityType.NAME for s in listed)


def test_the_veto_classes_screen_listed_names() -> None:
    """A drug in a list of names is still a drug: the text pass screens what the list finds,
    and the drop is a near-miss for review."""
    kept, dropped = screen_spans("参加会议的有邹晴、顾长林、布洛芬、潘雪。")
    assert "布洛芬" not in {s.text for s in kept}
    assert ("布洛芬", "name_list") in {(s.text, s.source) for s, _ in dropped}
