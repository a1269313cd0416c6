"""Suspects: what the machine half-saw and left unmasked, for the reviewer's residual-PII pass.

A reviewer reads every suspect, so a suspect must come from evidence, never from a word being
uncommon or a proper noun: a list of 谢谢, 祝您 and drug fragments teaches reviewers to skip
it. Each suspect says its evidence in ``reason``:

* a veto class dropped a span a recognizer (or the LLM pass) proposed, and the class is a
  judgement call (``term_vetoes.SHOWN_CLASSES``: a public figure, a brand used like a
  medicine …): ``kind`` ``vetoed``, ``reason`` the class. Drops of the classes that are sure of
  themselves (a medicine of the lexicon, a drug stem, an eponym, a product code) are not shown;
* the NER model proposed a person or an organisation and its own check dropped it
  (``ner.vetoed_entities``; a CRF read by Viterbi has no score, so these are its half-beliefs),
  and the span is no dictionary word, no clinical term (the veto classes and the medicine
  lexicon pass it) and holds a letter of a name: ``reason`` ``model``;
* a person frame around an unknown word: a surname and a title (某医生), a familiar form
  (老某, 小某, 阿某) or an undictionaried word after a person cue (我叫…, 同事…, 户名…):
  ``reason`` ``person_frame``;
* a care frame around an unknown word: where care was sought (在…看的, 喺…睇, 去的…, 离…近,
  …说是): a hospital's short name (``reason`` ``care_frame``);
* the value of an identifier label left unmasked (抖音号…, 病理号：…, 住址：…, Name: …):
  ``reason`` ``label_value``;
* an account-, code- or room-shaped token (letters and four digits, an underscore handle,
  number-number-number) outside any product code, or the rest of an address or hospital the
  mask stopped short of (…21号楼2门604, …三院): ``reason`` ``id_shape`` and ``continues_mask``.

OCR text left on images goes through the same finder (``image.near_miss_boxes``). Offsets are
given in the masked text (what the reviewer reads), so a record of them holds no identifier;
suspects never overlap each other or a masked span.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from medrealmm.deid import ner
from medrealmm.deid.names import AFTER_TITLES, SURNAME_RE, word_count
from medrealmm.deid.recognizers.product_codes import product_code_at
from medrealmm.deid.record import Suspect
from medrealmm.deid.spans import EntityType, Span
from medrealmm.deid.term_vetoes import SHOWN_CLASSES, screen

Candidate = tuple[int, int, str, str, str]  # start, end, kind, source, reason

_HAN = "\u4e00-\u9fff"
# How often the dictionary may count a word that is shown as unknown (a hospital's or a
# person's short name: 同济 85, 协和 163); everyday words count in the thousands.
_RARE = 200

# ------------------------------------------------------------------ the model's half-beliefs

_NAME_LETTERS = re.compile(f"^(?:[{_HAN}]{{2,8}}|[A-Za-z][A-Za-z .'-]{{2,30}})$")


# An organisation the model half-believed is shown from this length on (a hospital's or an
# employer's name); shorter ones are mostly makers, platforms and offices (京东, 工行, 卫健委),
# and a short hospital name in a care frame is shown as such.
_ORG_SHOWN = 4


def _model_suspects(text: str) -> Iterator[Candidate]:
    for start, end, label in ner.vetoed_entities(text):
        word = text[start:end]
        if not _NAME_LETTERS.match(word) or word_count(word) >= _RARE:
            continue
        if label != "PER" and end - start < _ORG_SHOWN:
            continue
        # Read as a name too: a drug, a herb or a dosage form the vetoes know by shape.
        probes = [Span(start=start, end=end, type=EntityType.NAME, text=word, source="lac_ner")]
        if label != "PER":
            probes.append(probes[0].model_copy(update={"type": EntityType.ORG}))
        if any(screen(text, [probe])[1] for probe in probes):
            continue  # a medicine, a drug stem, an eponym: the vetoes know what it is
        yield start, end, "vetoed", f"lac_ner:{label}", "model"


# ------------------------------------------------------------------ frames around a word

_PERSON_CUE = re.compile(
    "(?:我叫|名叫|叫做|患者|病人|家属|联系人|户名|备注|同事|朋友|邻居|室友|同学|学生|"
    "女儿|儿子|老公|老婆|爱人|妈妈|爸爸|奶奶|爷爷|外婆|外公)[：:是]?\\s?"
)
_UNKNOWN_WORD = re.compile(f"[{_HAN}]{{2,4}}")
_TITLED = re.compile(f"({SURNAME_RE})(?:{AFTER_TITLES}|阿姨|叔叔|老师)")
_SURNAME = re.compile(SURNAME_RE)
_FAMILIAR = re.compile(f"[老小阿]([{_HAN}])(?=[也说的那都和跟让叫是，,。！!？?\\s])")
_CARE_BEFORE = "(?:在|去|到|喺|离|去的|转到|转去|住过|住在)"
_CARE_AFTER = "(?:看|睇|就诊|住院|拍|查|做|近|复查|挂号|开的|说是|说|又说|诊断)"
_CARE_FRAME = re.compile(f"{_CARE_BEFORE}([{_HAN}]{{2,5}}?){_CARE_AFTER}")
_SAYS = re.compile(f"(?:^|[，,。！!？?\\s])([{_HAN}]{{2,4}}?)(?:又说|说是|诊断)")


# A two-sided care frame (喺…睇, 在…看的) is evidence enough for a word the dictionary counts
# more often (华山, 中山): only everyday words (家里, 网上) count beyond this.
_RARE_IN_CARE = 2000
_FUNCTION_START = frozenset("也都还就有没说是的在和跟与了不很太又再才")


def _tokens(text: str, start: int, end: int) -> list[str]:
    from medrealmm.deid.names import _segmenter  # jieba's shared, initialised dictionary

    return list(_segmenter().cut(text[start:end]))  # type: ignore[attr-defined]


# Where care is sought that names no one place: a department, a kind of facility, a care verb.
_CARE_GENERIC = re.compile("(?:科|门诊|病房|病区|药店|药房|诊所|出院|入院|住院|转院)$")


def _unknown(text: str, start: int, end: int, rare: int = _RARE) -> bool:
    """``text[start:end]`` reads as one rare word or a few: no function character first, no
    department or care verb, and no token of it an everyday word (乳腺癌|术, 医生|指导|下)."""
    if text[start] in _FUNCTION_START or _CARE_GENERIC.search(text, start, end):
        return False
    return all(len(t) < 2 or word_count(t) < rare for t in _tokens(text, start, end))


def _frame_suspects(text: str) -> Iterator[Candidate]:
    for cue in _PERSON_CUE.finditer(text):
        head = _tokens(text, cue.end(), min(len(text), cue.end() + 6))
        word = head[0] if head else ""
        if _UNKNOWN_WORD.fullmatch(word) and word_count(word) == 0:
            yield cue.end(), cue.end() + len(word), "frame", "person_cue", "person_frame"
    for titled in _TITLED.finditer(text):
        before = text[titled.start() - 1 : titled.start() + 1] if titled.start() else ""
        if len(before) == 2 and word_count(before) >= _RARE:
            continue  # 主任|医生: the surname ends a word
        yield titled.start(1), titled.end(1), "frame", "surname_title", "person_frame"
    for familiar in _FAMILIAR.finditer(text):
        count = word_count(familiar.group(0))  # 小结, 小名: words; 老陆, 小琴: people
        if count == 0 or (count < _RARE and _SURNAME.fullmatch(familiar.group(1))):
            yield familiar.start(), familiar.end(), "frame", "familiar_form", "person_frame"
    for care in _CARE_FRAME.finditer(text):
        if _unknown(text, care.start(1), care.end(1), _RARE_IN_CARE):
            yield care.start(1), care.end(1), "frame", "care_frame", "care_frame"
    for said in _SAYS.finditer(text):
        if _unknown(text, said.start(1), said.end(1)):
            yield said.start(1), said.end(1), "frame", "care_frame", "care_frame"


# ------------------------------------------------------------------ shapes and labels

# Labels whose value is a code or an account, and labels whose value is a name or a place.
_CODE_LABEL = re.compile(
    "(?:抖音号?|快手号?|微信号?|微信搜|vx|wx|QQ号?|扣扣|微博|小红书号?|账号|ID|id|"
    "病理号|标本号|条码号|申请单号|卡号|证号|编号|号码|车牌号?|Name|NAME|姓名|户名)"
    "\\s?[：:]?\\s?(?:是|为)?\\s?"
)
_CODE_VALUE = re.compile("[A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*)+|[A-Za-z0-9_\\-.@]{3,}")
_NAME_LABEL = re.compile(
    "(?:住址|地址|家住|工作单位|单位|学校|姓名|户名)\\s?[：:]?\\s?(?:是|为|在)?\\s?"
)
_NAME_VALUE = re.compile(
    f"(?![{''.join(_FUNCTION_START)}能看配可会要想])[{_HAN}][{_HAN}0-9\\-]{{2,}}"
)
_ACCOUNT_SHAPE = re.compile(
    r"(?<![A-Za-z0-9_])(?:[A-Za-z][A-Za-z0-9_.\-]*(?:\d[A-Za-z0-9_.\-]*){4,}"
    r"|[A-Za-z]+_[A-Za-z0-9_]+|\d{1,4}(?:-\d{1,4}){2,})(?![A-Za-z0-9_])"
)
# What continues a place the mask stopped short of: an estate's building, unit and room
# (…丽景湾24栋2单元3006), a hospital's number (湘雅|三), a branch, a school or a station.
# Codes that name no one: an ICD-10 code (E11.900), a model number (HEM-7136), a handle
# word with no digit (client_ip).
_NOT_AN_ACCOUNT = re.compile(r"[A-Z]\d{2}\.\d{1,4}|[A-Z]{1,5}-\d{2,6}[A-Z]?|[A-Za-z_]+")
_PLACE_TAIL = re.compile(
    f"(?:(?![的了说是在和])[{_HAN}]){{0,6}}?(?:[0-9A-Za-z]+(?:号楼|栋|幢|单元|门|层|楼|室|号|座|-))+"
    f"[0-9A-Za-z]*"
    f"|[一二三四五六七八九十](?:院|附院|医院)?(?=[^{_HAN}]|$|{_CARE_AFTER})"
    f"|[一二三四五六七八九十]?(?:院|附院)"
    f"|[{_HAN}]{{0,4}}(?:分院|院区|小学|中学|学校|幼儿园|分公司|站|中心)"
)
_PLACES = frozenset({EntityType.ADDRESS, EntityType.HOSPITAL, EntityType.ORG})


def _shape_suspects(text: str, masked: Sequence[Span]) -> Iterator[Candidate]:
    for labels, values in ((_CODE_LABEL, _CODE_VALUE), (_NAME_LABEL, _NAME_VALUE)):
        for label in labels.finditer(text):
            value = values.match(text, label.end())
            if value is not None:
                yield value.start(), value.end(), "shape", "label", "label_value"
    for token in _ACCOUNT_SHAPE.finditer(text):
        if _NOT_AN_ACCOUNT.fullmatch(token.group(0)):
            continue
        if not product_code_at(text, token.start()):
            yield token.start(), token.end(), "shape", "token", "id_shape"
    for span in masked:
        if span.type in _PLACES:
            tail = _PLACE_TAIL.match(text, span.end)
            if tail is not None and tail.end() > tail.start():
                yield (
                    tail.start(),
                    tail.end(),
                    "shape",
                    f"after:{span.type.value}",
                    "continues_mask",
                )


# ------------------------------------------------------------------ the list


def near_misses(
    text: str, masked: Sequence[Span], vetoed: Sequence[tuple[Span, str]] = ()
) -> list[Suspect]:
    """Suspects of ``text`` in its own offsets, none overlapping another or a masked span:
    ``vetoed`` are the spans a veto class dropped, with the class (``text.screen_spans``)."""
    shown = [(s, why) for s, why in vetoed if why in SHOWN_CLASSES]
    by_length = sorted(shown, key=lambda pair: (pair[0].start, -pair[0].length))
    candidates: list[Candidate] = [
        *((s.start, s.end, "vetoed", f"{s.source}:{s.type.value}", why) for s, why in by_length),
        *_shape_suspects(text, masked),
        *_model_suspects(text),
        *_frame_suspects(text),
    ]
    # One suspect per stretch of text, the strongest evidence first; masked stretches never.
    taken: list[tuple[int, int]] = [(span.start, span.end) for span in masked]
    found: list[Suspect] = []
    for start, end, kind, source, reason in candidates:
        if end <= start or any(start < stop and begin < end for begin, stop in taken):
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
