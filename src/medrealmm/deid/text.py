"""The text pass: run every registered recognizer, resolve overlaps, mask with typed
placeholders, and make a consultation's turns agree with each other."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources

from medrealmm.deid.listed_names import listed_names
from medrealmm.deid.names import COMPOUND_SURNAMES, is_common_word
from medrealmm.deid.recognizer import Recognizer, find_each
from medrealmm.deid.registry import default_registry
from medrealmm.deid.spans import EntityType, Span, apply_placeholders, resolve_overlaps
from medrealmm.deid.term_vetoes import screen


@cache
def _shared_registry() -> Iterable[Recognizer]:
    # Built once per process: recognizers hold compiled patterns and loaded models.
    return default_registry()


# Full-width digits, letters and the symbols inside identifiers (１３８…, ＠, ．) read as ASCII:
# one character for one, so offsets still point into the original text. Chinese punctuation
# (：，（）) is left alone; the rules read it as it is.
_HALF_WIDTH = (
    {c: c - 0xFEE0 for c in range(0xFF10, 0xFF1A)}
    | {
        c: c - 0xFEE0
        for c in [*range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B), 0xFF0B, 0xFF0D, 0xFF0E]
    }
    | {0xFF0F: ord("/"), 0xFF20: ord("@"), 0x3000: ord(" ")}
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
        if len(key) == 1 and len(value) == 1 and key != value:
            out[ord(key)] = ord(value)
    return out


@cache
def _plain_table() -> tuple[dict[int, int], frozenset[str]]:
    """The character map ``plain_text`` applies, and the characters it maps: most texts hold
    none, and a set's ``isdisjoint`` over a text finds that several times faster than
    ``str.translate`` or a regex scan does."""
    table = _simplified() | _HALF_WIDTH
    return table, frozenset(map(chr, table))


def plain_text(text: str) -> str:
    """``text`` as the recognizers read it: full-width ASCII as ASCII and traditional
    characters as simplified, one character for one, so a span's offsets hold for both."""
    table, mapped = _plain_table()
    return text if mapped.isdisjoint(text) else text.translate(table)


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
    plains = [plain_text(t) for t in texts]
    found: list[list[Span]] = [[] for _ in texts]
    full = [i for i, plain in enumerate(plains) if plain]  # an empty text reaches none
    window = [plains[i] for i in full]
    for recognizer in recognizers:
        for i, spans in find_each(recognizer, window):
            found[full[i]].extend(spans)
    out: list[tuple[list[Span], list[tuple[Span, str]]]] = []
    for text, plain, spans in zip(texts, plains, found, strict=True):
        if not text:
            out.append(([], []))
            continue
        # Clinical and commercial terms (a product code, a drug or brand, a dialect
        # pronoun): vetoed by their class, whichever recognizer took them.
        kept, dropped = screen(plain, spans)
        # Names in a list of names: read off the screened names, screened in their turn.
        listed, listed_dropped = screen(plain, listed_names(plain, kept))
        kept, dropped = kept + listed, dropped + listed_dropped
        kept, dropped = _in_original(text, plain, kept, dropped)
        out.append((resolve_overlaps(kept), dropped))
    return out


def screen_proposals(text: str, spans: Iterable[Span]) -> tuple[list[Span], list[tuple[Span, str]]]:
    """``term_vetoes.screen`` of spans found elsewhere (the LLM pass's proposals) over
    ``text`` as the recognizers read it (``plain_text``), so a drug written in traditional
    characters is vetoed as its simplified form is; the spans keep ``text``'s characters."""
    plain = plain_text(text)
    kept, dropped = screen(plain, spans)
    return _in_original(text, plain, kept, dropped)


def _in_original(
    text: str, plain: str, kept: list[Span], dropped: list[tuple[Span, str]]
) -> tuple[list[Span], list[tuple[Span, str]]]:
    """Screened spans with ``text``'s own characters where ``plain`` differs from it."""
    if plain == text:
        return kept, dropped
    kept = [s.model_copy(update={"text": text[s.start : s.end]}) for s in kept]
    dropped = [(s.model_copy(update={"text": text[s.start : s.end]}), r) for s, r in dropped]
    return kept, dropped


def prepare(texts: Sequence[str], using: Iterable[Recognizer] | None = None) -> None:
    """Let recognizers that batch (a model) see ``texts`` at once; ``find_spans`` then reads
    their cache. A caller that will mask many texts soon (a window of consultations) calls
    this first: the model runs in a few large batches instead of many small ones."""
    for recognizer in using if using is not None else _shared_registry():
        warm = getattr(recognizer, "prepare", None)
        if warm is not None:
            warm([plain_text(t) for t in texts if t])


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
    pattern = re.compile("|".join(re.escape(s) for s in sorted(kind, key=len, reverse=True)))
    out: list[list[Span]] = []
    for text, turn in zip(texts, spans, strict=True):
        retyped = [
            span.model_copy(update={"type": kind.get(span.text, span.type)}) for span in turn
        ]
        extra = [
            Span(
                start=m.start(),
                end=m.end(),
                type=kind[m.group(0)],
                text=m.group(0),
                source="consistency",
            )
            for m in pattern.finditer(text)
            if not any(m.start() < s.end and s.start < m.end() for s in retyped)
        ]
        out.append(resolve_overlaps([*retyped, *extra]))
    return out
