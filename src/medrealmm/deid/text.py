"""The text pass: run every registered recognizer, resolve overlaps, mask with typed
placeholders, and make a consultation's turns agree with each other."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache

from medrealmm.deid.listed_names import listed_names
from medrealmm.deid.names import COMPOUND_SURNAMES, is_common_word
from medrealmm.deid.reading import Reading, canonical_reading, fold
from medrealmm.deid.recognizer import Recognizer, find_each
from medrealmm.deid.registry import default_registry
from medrealmm.deid.spans import EntityType, Span, apply_placeholders, resolve_overlaps
from medrealmm.deid.term_vetoes import screen


@cache
def _shared_registry() -> Iterable[Recognizer]:
    # Built once per process: recognizers hold compiled patterns and loaded models.
    return default_registry()


def plain_text(text: str) -> str:
    """``text`` read one character for one (``reading.fold``: traditional as simplified,
    full-width as ASCII), so its offsets hold; the recognizers read ``canonical_reading``."""
    return fold(text)


def find_spans(text: str, using: Iterable[Recognizer] | None = None) -> list[Span]:
    """Non-overlapping typed spans of ``text`` found by ``using`` (the default registry)."""
    return screen_spans(text, using)[0]


def screen_spans(
    text: str, using: Iterable[Recognizer] | None = None
) -> tuple[list[Span], list[tuple[Span, str]]]:
    """``find_spans`` and what the veto classes dropped, each with its class: the drops are
    the review app's near-misses (``near_miss.find_suspects``)."""
    return _screened([text], using if using is not None else _shared_registry())[0]


def _screened(
    texts: Sequence[str], recognizers: Iterable[Recognizer]
) -> list[tuple[list[Span], list[tuple[Span, str]]]]:
    """``screen_spans`` of each text, recognizer by recognizer over all of them (the spans
    of each text in the registry's order, as one text at a time would have them): most
    (text, recognizer) pairs find nothing, and a window makes that a loop inside each
    recognizer instead of a call per pair."""
    readings = [canonical_reading(t) for t in texts]
    plains = [r.text for r in readings]
    found: list[list[Span]] = [[] for _ in texts]
    full = [i for i, plain in enumerate(plains) if plain]  # an empty text reaches none
    window = [plains[i] for i in full]
    for recognizer in recognizers:
        for i, spans in find_each(recognizer, window):
            found[full[i]].extend(spans)
    out: list[tuple[list[Span], list[tuple[Span, str]]]] = []
    for text, reading, spans in zip(texts, readings, found, strict=True):
        if not text:
            out.append(([], []))
            continue
        plain = reading.text
        # Clinical and commercial terms (a product code, a drug or brand, a dialect
        # pronoun): vetoed by their class, whichever recognizer took them.
        kept, dropped = screen(plain, spans)
        # Names in a list of names: read off the screened names, screened in their turn.
        listed, listed_dropped = screen(plain, listed_names(plain, kept))
        kept, dropped = kept + listed, dropped + listed_dropped
        kept, dropped = _in_original(text, reading, _joined_parts(kept), dropped)
        out.append((resolve_overlaps(kept), dropped))
    return out


_BUILT_IN_PARTS = frozenset({EntityType.ADDRESS, EntityType.ORG})


def _joined_parts(spans: list[Span]) -> list[Span]:
    """Address and organisation spans of one type that overlap made one: such a
    place is found in parts (the road and number by one rule, the estate, building and room
    by another; a school, then the school with its class), and keeping the longer part alone
    would leave the other unmasked."""
    parts = sorted((s for s in spans if s.type in _BUILT_IN_PARTS), key=lambda s: s.start)
    if len(parts) < 2:
        return spans
    joined: list[Span] = []
    for span in parts:
        last = joined[-1] if joined else None
        if last is not None and last.type is span.type and span.start < last.end:
            end = max(last.end, span.end)
            text = last.text + span.text[last.end - span.start :] if end > last.end else last.text
            joined[-1] = last.model_copy(update={"end": end, "text": text})
        else:
            joined.append(span)
    return [s for s in spans if s.type not in _BUILT_IN_PARTS] + joined


def screen_proposals(text: str, spans: Iterable[Span]) -> tuple[list[Span], list[tuple[Span, str]]]:
    """``term_vetoes.screen`` of spans found elsewhere (the LLM pass's proposals) over
    ``text`` as the recognizers read it (``canonical_reading``), so a drug written in
    traditional characters is vetoed as its simplified form is; the spans keep ``text``'s
    characters."""
    reading = canonical_reading(text)
    inside = []
    for span in spans:
        start, end = reading.to_reading(span.start, span.end)
        if end > start:
            inside.append(span.model_copy(update={"start": start, "end": end}))
    kept, dropped = screen(reading.text, inside)
    return _in_original(text, reading, kept, dropped)


def _in_original(
    text: str, reading: Reading, kept: list[Span], dropped: list[tuple[Span, str]]
) -> tuple[list[Span], list[tuple[Span, str]]]:
    """Spans found in ``reading`` over ``text``'s own characters: the same offsets where the
    reading is ``text`` itself, else mapped back (a span across removed separators covers
    them)."""
    if reading.text == text and isinstance(reading.origin, range):
        return kept, dropped

    def back(span: Span) -> Span:
        start, end = reading.to_original(span.start, span.end)
        return span.model_copy(update={"start": start, "end": end, "text": text[start:end]})

    return [back(s) for s in kept], [(back(s), r) for s, r in dropped]


def prepare(texts: Sequence[str], using: Iterable[Recognizer] | None = None) -> None:
    """Let recognizers that batch (a model) see ``texts`` at once; ``find_spans`` then reads
    their cache. A caller that will mask many texts soon (a window of consultations) calls
    this first: the model runs in a few large batches instead of many small ones."""
    for recognizer in using if using is not None else _shared_registry():
        warm = getattr(recognizer, "prepare", None)
        if warm is not None:
            warm([canonical_reading(t).text for t in texts if t])


def find_spans_in(
    texts: Sequence[str], using: Iterable[Recognizer] | None = None
) -> list[list[Span]]:
    """``find_spans`` for many texts, prepared together."""
    return [kept for kept, _ in screen_spans_in(texts, using)]


def screen_spans_in(
    texts: Sequence[str], using: Iterable[Recognizer] | None = None
) -> list[tuple[list[Span], list[tuple[Span, str]]]]:
    """``screen_spans`` for many texts, prepared together."""
    recognizers = list(using if using is not None else _shared_registry())
    prepare(texts, recognizers)
    return _screened(texts, recognizers)


def mask_text(text: str) -> tuple[str, list[Span]]:
    spans = find_spans(text)
    return apply_placeholders(text, spans), spans


def _surfaces(span: Span) -> list[str]:
    """The strings that identify the same entity elsewhere: a name's given part counts too."""
    out = [span.text]
    if span.type is EntityType.NAME:
        surname_len = 2 if span.text[:2] in COMPOUND_SURNAMES else 1
        given = span.text[surname_len:]
        # A given name that is also an ordinary word (王平安 -> 平安) would mask that word in
        # every turn: only the full name counts then.
        if len(given) >= 2 and not is_common_word(given):
            out.append(given)
    return [s for s in out if len(s) >= 2]


def make_consistent(texts: Sequence[str], spans: Sequence[list[Span]]) -> list[list[Span]]:
    """Mask every occurrence of an entity found anywhere in the consultation, with one type.

    A name introduced in turn 1 (我叫朱秀英) and repeated bare in turn 7 is masked in both;
    a string typed differently in two turns takes its majority type everywhere.
    """
    votes: dict[str, Counter[EntityType]] = {}
    for turn in spans:
        for span in turn:
            for surface in _surfaces(span):
                votes.setdefault(surface, Counter())[span.type] += 1
    if not votes:
        return [list(turn) for turn in spans]
    kind = {surface: counter.most_common(1)[0][0] for surface, counter in votes.items()}
    # Searched in each turn's reading, so a repeat written another way (full-width, a
    # zero-width space inside, spaced digits) is the same entity.
    by_reading = {canonical_reading(surface).text: k for surface, k in kind.items()}
    by_reading.pop("", None)
    pattern = re.compile("|".join(re.escape(s) for s in sorted(by_reading, key=len, reverse=True)))
    out: list[list[Span]] = []
    for text, turn in zip(texts, spans, strict=True):
        retyped = [
            span.model_copy(update={"type": kind.get(span.text, span.type)}) for span in turn
        ]
        reading = canonical_reading(text)
        extra = []
        for m in pattern.finditer(reading.text):
            start, end = reading.to_original(m.start(), m.end())
            if not any(start < s.end and s.start < end for s in retyped):
                extra.append(
                    Span(
                        start=start,
                        end=end,
                        type=by_reading[m.group(0)],
                        text=text[start:end],
                        source="consistency",
                    )
                )
        out.append(resolve_overlaps([*retyped, *extra]))
    return out
