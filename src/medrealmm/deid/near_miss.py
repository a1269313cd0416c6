"""Near-misses: what the machine saw and chose not to mask, for the reviewer's residual-PII pass.

Recall misses are what review is for, so the review app highlights where a miss is likeliest:

* ``vetoed``: a span a recognizer (or the LLM pass) proposed and a veto class of
  ``term_vetoes`` dropped, with the class as its ``reason`` (``drug_stem``, ``medicine`` …);
  and a person or organisation the NER model proposed and its own check dropped (a
  drug-shaped name, a dictionary word), with ``reason`` ``model``. The NER model is a CRF
  read by Viterbi with no per-span score, so these model drops are its low-confidence spans;
* ``proper_noun``: a word the segmenter tags as a person, organisation or other proper noun
  (jieba's nr/nt/nz) that no recognizer masked.

OCR text left on images is recorded with each image (``ImageRecord.unmasked_text``).

Offsets are given in the masked text (what the reviewer reads), so a record of them holds no
identifier; spans that overlap a masked span are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from medrealmm.deid import ner
from medrealmm.deid.names import (
    CLINICAL_LEXICON,
    _segmenter,
    clinical_term_shaped,
    used_like_a_drug,
)
from medrealmm.deid.record import Suspect
from medrealmm.deid.spans import Span

_PROPER_TAGS = ("nr", "nt", "nz")


def _proper_nouns(text: str) -> Iterable[tuple[int, int, str]]:
    import jieba.posseg

    _segmenter()  # the shared, initialised dictionary
    cursor = 0
    for pair in jieba.posseg.cut(text):
        word, flag = pair.word, pair.flag
        start, cursor = cursor, cursor + len(word)
        if len(word) < 2 or not flag.startswith(_PROPER_TAGS) or word in CLINICAL_LEXICON:
            continue
        if clinical_term_shaped(text, start, cursor) or used_like_a_drug(text, start, cursor):
            continue  # the tagger's names for drugs (布洛芬/nr) are not worth a reviewer's look
        yield start, cursor, flag


def near_misses(
    text: str, masked: Sequence[Span], vetoed: Sequence[tuple[Span, str]] = ()
) -> list[Suspect]:
    """Near-misses of ``text`` in its own offsets, none overlapping another or a masked span:
    ``vetoed`` are the spans a veto class dropped, with the class (``text.screen_spans``)."""
    by_length = sorted(vetoed, key=lambda pair: (pair[0].start, -pair[0].length))
    candidates = [
        *((s.start, s.end, "vetoed", f"{s.source}:{s.type.value}", why) for s, why in by_length),
        *((s, e, "vetoed", f"lac_ner:{tag}", "model") for s, e, tag in ner.vetoed_entities(text)),
        *((s, e, "proper_noun", f"jieba:{flag}", None) for s, e, flag in _proper_nouns(text)),
    ]
    # One highlight per stretch of text: a veto class first, then the model's own check,
    # then a tag (each says more than the next); masked stretches are never highlighted.
    taken: list[tuple[int, int]] = [(span.start, span.end) for span in masked]
    found: list[Suspect] = []
    for start, end, kind, source, reason in candidates:
        if any(start < stop and begin < end for begin, stop in taken):
            continue
        taken.append((start, end))
        found.append(Suspect(start=start, end=end, kind=kind, source=source, reason=reason))
    return sorted(found, key=lambda s: (s.start, s.end))


def find_suspects(
    text: str, masked: Sequence[Span], vetoed: Sequence[tuple[Span, str]] = ()
) -> list[Suspect]:
    """``near_misses`` of one turn in the offsets of its masked text (``masked_offset``)."""
    return [
        s.model_copy(
            update={"start": masked_offset(s.start, masked), "end": masked_offset(s.end, masked)}
        )
        for s in near_misses(text, masked, vetoed)
    ]


def masked_offset(position: int, masked: Sequence[Span]) -> int:
    """Where ``position`` of the original text (outside every span) lands in the masked text."""
    shift = 0
    for span in masked:
        if span.end <= position:
            shift += len(span.type.placeholder) - span.length
    return position + shift
