"""Near-misses: what the machine saw and chose not to mask, for the reviewer's residual-PII pass.

Recall misses are what review is for, so the review app highlights where a miss is likeliest:

* ``vetoed``: a person or organisation the NER model proposed and a veto dropped (a drug-shaped
  name, a dictionary word);
* ``proper_noun``: a word the segmenter tags as a person, organisation or other proper noun
  (jieba's nr/nt/nz) that no recognizer masked.

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


def find_suspects(text: str, masked: Sequence[Span]) -> list[Suspect]:
    """Near-misses of one turn, in the offsets of its masked text (see ``masked_offset``)."""
    found: dict[tuple[int, int], Suspect] = {}
    candidates = [
        *((s, e, "vetoed", f"lac_ner:{label}") for s, e, label in ner.vetoed_entities(text)),
        *((s, e, "proper_noun", f"jieba:{flag}") for s, e, flag in _proper_nouns(text)),
    ]
    for start, end, kind, source in candidates:
        if any(start < span.end and span.start < end for span in masked):
            continue
        at = (masked_offset(start, masked), masked_offset(end, masked))
        if at not in found:  # the model's veto first: it says more than a tag
            found[at] = Suspect(start=at[0], end=at[1], kind=kind, source=source)
    return sorted(found.values(), key=lambda s: (s.start, s.end))


def masked_offset(position: int, masked: Sequence[Span]) -> int:
    """Where ``position`` of the original text (outside every span) lands in the masked text."""
    shift = 0
    for span in masked:
        if span.end <= position:
            shift += len(span.type.placeholder) - span.length
    return position + shift
