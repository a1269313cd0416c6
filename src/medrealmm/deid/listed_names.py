"""Names in a list of names: an item the recognizers left alone between items they masked as
names (邹晴、顾长林、谢明、[钟离月]、潘雪) is one more person, whatever its shape.

A list says its items are of one kind. Where most of a list's items are names, the rest are
names too: a stage name, a nickname, or a rare given name no rule or model knows on its own.
This is a pass over one text's screened spans, after the veto classes: a vetoed drug in a
list counts as no name, and what this pass finds is screened by the same classes in its turn
(``text._screened``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from medrealmm.deid.names import NAME_STOP, clinical_term_shaped, is_common_word, name_span
from medrealmm.deid.spans import EntityType, Span

SOURCE = "name_list"
# 、 joins the items of a list; a comma does next to a short item.
_JOINS = "、，,"
_SEGMENTS = re.compile(f"[^{_JOINS}。！？!?；;：:\n\\s]+|[{_JOINS}]")
_SHORT = 4  # an item of at most this many characters is a name, not a clause
_HAN_ITEM = re.compile("[\u4e00-\u9fff]{2,3}")


def _lists(text: str) -> list[list[tuple[int, int]]]:
    """Runs of three or more items joined by 、, or by commas next to a short item. A long
    item joined by commas (a clause) may only stand at a run's edge: the run ends there."""
    runs: list[list[tuple[int, int]]] = []
    run: list[tuple[int, int]] = []
    joiner = ""  # the joint right after the run's last item, if one is
    for match in _SEGMENTS.finditer(text):
        start, end = match.span()
        if match.group() in _JOINS:
            joiner = match.group() if run and run[-1][1] == start else ""
            continue
        item = (start, end)
        if joiner and run[-1][1] + 1 == start and (joiner == "、" or _short(run[-1], item)):
            if joiner != "、" and not _short(run[-1]) and len(run) > 1:
                runs.append(run)
                run = [run[-1]]
            run.append(item)
        else:
            runs.append(run)
            run = [item]
        joiner = ""
    runs.append(run)
    return [r for r in runs if len(r) >= 3]


def _short(*items: tuple[int, int]) -> bool:
    """Whether any of ``items`` is short enough to be a name rather than a clause."""
    return any(end - start <= _SHORT for start, end in items)


def _named(item: tuple[int, int], names: Sequence[Span], first: bool, last: bool) -> bool:
    """An item a NAME span fills; the list's first item may start with other words (和蒋涵)
    and its last run on (贺知章一起吃饭), so there the span need only meet the joint."""
    start, end = item
    for span in names:
        if span.start <= start and end <= span.end:
            return True
        if first and span.end == end and span.start > start:
            return True
        if last and span.start == start and span.end < end:
            return True
    return False


def _candidate(text: str, item: tuple[int, int], masked: Sequence[Span]) -> bool:
    start, end = item
    if not _HAN_ITEM.fullmatch(text, start, end):
        return False
    if any(s.start < end and start < s.end for s in masked):
        return False
    value = text[start:end]
    if is_common_word(value) or any(c in NAME_STOP for c in value):
        return False
    return not clinical_term_shaped(text, start, end)


def listed_names(text: str, spans: Sequence[Span]) -> list[Span]:
    """NAME spans for the unmasked items of lists in ``text`` that are mostly names: at
    least two items named by ``spans`` and no fewer named items than others."""
    names = [s for s in spans if s.type is EntityType.NAME]
    if len(names) < 2:
        return []
    found: list[Span] = []
    for run in _lists(text):
        named = [_named(item, names, i == 0, i == len(run) - 1) for i, item in enumerate(run)]
        if sum(named) < 2 or 2 * sum(named) < len(run):
            continue
        for i, item in enumerate(run):
            whole = 0 < i < len(run) - 1 or item[1] - item[0] <= 3
            if not named[i] and whole and _candidate(text, item, spans):
                found.append(name_span(text, item[0], item[1], SOURCE))
    return found
