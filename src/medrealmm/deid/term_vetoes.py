"""Veto classes: spans that are clinical or commercial terms, not identifiers.

Every recognizer's output (and the LLM pass's proposals) goes through these before masking,
so one class covers what any recognizer took by mistake. Each class is a kind of term, told
by its shape or its context, never a list of strings met in an evaluation set:

* ``product_code``: a code after a product-code label (国药准字, 型号, 批号 …);
* ``brand_before_model``: a maker before a model number (欧姆龙HEM-7136, 鱼跃YE660);
* ``dialect_pronoun_or_insurance``: a "name" that starts with 俺, 咱, 侬, 医保, 新农合 …;
* ``dosage_or_food_form``: a "name" that ends in a dosage or food form (…粉, …片, …膏);
* ``drug_stem``: a "name" inside a chemical or transliterated drug name (氯苯|那敏);
* ``clinical_term_shape``: a herb ending, a stem, a dosage form or a disease word running
  on after the span (the name recognizers' own test, ``names.clinical_term_shaped``);
* ``used_like_a_medicine``: a taking verb before or a medicine's attribute after the word the
  span starts (白加|黑的副作用, …按时吃, …吃完一周), for spans no cue introduced.

Medicines the lexicon knows are cut out first (``cut_medicines``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from medrealmm.deid.cut_medicines import cut_medicine
from medrealmm.deid.names import (
    NAME_STOP,
    NOT_NAME_STARTS,
    clinical_term_shaped,
    used_like_a_drug,
)
from medrealmm.deid.recognizers.product_codes import product_code_at
from medrealmm.deid.spans import EntityType, Span

Veto = Callable[[str, Span], bool]

# Names and places are never a product code's value.
_NEVER_CODES = frozenset({EntityType.NAME, EntityType.HOSPITAL, EntityType.ADDRESS})
_HAN = "\u4e00-\u9fff"

# Recognizers that find a name with no cue before it: a model, the segmenter's tags, the LLM
# pass. A name after a cue (我叫…, 患者…) keeps it whatever follows (患者张伟一天三次…).
_UNCUED_SOURCES = frozenset({"lac_ner", "name_jieba_nr", "llm"})


def product_code(text: str, span: Span) -> bool:
    return span.type not in _NEVER_CODES and product_code_at(text, span.start)


# A model number glued to the maker (HEM-7136, YE660D, 7136型): letters and digits with no
# blank inside, so a lab value after a name in a form (张三 ALT 56) is not one.
_MODEL_NUMBER = re.compile(r" ?(?:[A-Za-z]{1,6}-?\d{2,}[A-Za-z0-9\-]*|[A-Za-z0-9\-]*\d+型)")


def brand_before_model(text: str, span: Span) -> bool:
    """A maker an uncued recognizer took for a person or an organisation (欧姆龙HEM-7136)."""
    uncued = span.source in _UNCUED_SOURCES or span.type is EntityType.ORG
    return (
        span.type in (EntityType.NAME, EntityType.ORG)
        and uncued
        and bool(_MODEL_NUMBER.match(text, span.end))
    )


def dialect_pronoun_or_insurance(text: str, span: Span) -> bool:
    return span.type is EntityType.NAME and span.text.startswith(NOT_NAME_STARTS)


_FORM_END = re.compile(f"[{_HAN}](?:粉|片|丸|散|膏|液|剂|胶囊|颗粒|糖浆|冲剂|茶|酒|贴)$")


def dosage_or_food_form(text: str, span: Span) -> bool:
    return span.type is EntityType.NAME and bool(_FORM_END.search(span.text))


# Characters of chemical names (盐酸…, 马来酸氯苯…, 碳酸钙…) and the stems that begin no name.
_CHEMICAL_BEFORE = frozenset("酸苯氯溴碘氟钠钾钙镁锌铁铝铋胺醇酯酮烷烯嗪唑啶基")
_STEM_START = re.compile(
    "(?:那敏|沙星|西林|洛尔|普利|沙坦|他汀|替尼|单抗|霉素|环素|地平|替丁|拉唑|昔布|法林|西泮|唑仑|"
    "[唑胺酮醇嗪啶酚铵钠钾钙苷肟酯烷烯炔])"
)


def drug_stem(text: str, span: Span) -> bool:
    if span.type is not EntityType.NAME:
        return False
    glued = span.start > 0 and text[span.start - 1] in _CHEMICAL_BEFORE
    return glued or bool(_STEM_START.match(span.text))


def clinical_term_shape(text: str, span: Span) -> bool:
    return span.type is EntityType.NAME and clinical_term_shaped(text, span.start, span.end)


# What is said of a medicine with no object after it (…按时吃, …吃完一个礼拜, …冲服).
_TAKEN_AFTER = re.compile(
    r"(?:(?:按时|按量|按说明书?|饭[前后]|睡前|每晚|每早)(?:吃|服用?|用|喝|涂|抹)|冲服|含服|口服|外用|外敷"
    r"|泡水喝)(?=[，。！？；,.!?;\s]|$)"
    r"|吃完[一二三四五六七八九十两半几\d]+(?:个|盒|瓶|袋|板)?(?:天|周|礼拜|星期|月|疗程|盒|瓶|袋|板)"
    # a course with no object after it (…涂了三天, …吃了两周还疼); …吃了三天药 is a person's
    r"|(?:吃|服|涂|抹|喷|吸)了?[一二三四五六七八九十两半几\d]+个?(?:天|周|礼拜|星期|月|疗程)(?![药饭的])"
    # how long a course lasts (…要吃几天, …得用多久)
    r"|(?:要|得|需要|该)(?:吃|服|用|涂|喷)(?:几|多少|多久)"
)
_WORD_CHAR = re.compile(f"[{_HAN}]")
_LONGEST_RUN_ON = 2


def _word_end(text: str, end: int) -> int:
    """The end of the word a span starts: up to two more Han characters that end no name
    (白加|黑 -> 白加黑), so what follows the word can be read."""
    stop = end
    while (
        stop < len(text)
        and stop - end < _LONGEST_RUN_ON
        and _WORD_CHAR.match(text[stop])
        and text[stop] not in NAME_STOP
        and text[stop] not in "的了吃喝用服涂抹和与跟及也就都还又在是说"
    ):
        stop += 1
    return stop


def used_like_a_medicine(text: str, span: Span) -> bool:
    if span.type is not EntityType.NAME or span.source not in _UNCUED_SOURCES:
        return False
    for end in sorted({span.end, _word_end(text, span.end)}):
        if used_like_a_drug(text, span.start, end) or _TAKEN_AFTER.match(text, end):
            return True
    return False


VETOES: tuple[tuple[str, Veto], ...] = (
    ("product_code", product_code),
    ("brand_before_model", brand_before_model),
    ("dialect_pronoun_or_insurance", dialect_pronoun_or_insurance),
    ("dosage_or_food_form", dosage_or_food_form),
    ("drug_stem", drug_stem),
    ("clinical_term_shape", clinical_term_shape),
    ("used_like_a_medicine", used_like_a_medicine),
)


# The types each class can drop (its own first test): a span is tried against those classes
# only, in ``VETOES`` order. Most spans are dates, numbers and places, for which all but one
# class would answer no at once.
VETO_TYPES: dict[str, frozenset[EntityType]] = {
    "product_code": frozenset(EntityType) - _NEVER_CODES,
    "brand_before_model": frozenset({EntityType.NAME, EntityType.ORG}),
}
_BY_TYPE: dict[EntityType, tuple[tuple[str, Veto], ...]] = {
    kind: tuple(
        (name, veto)
        for name, veto in VETOES
        if kind in VETO_TYPES.get(name, frozenset({EntityType.NAME}))
    )
    for kind in EntityType
}


def veto_class(text: str, span: Span) -> str | None:
    """The first veto class ``span`` falls in, None when it is kept."""
    for name, veto in _BY_TYPE[span.type]:
        if veto(text, span):
            return name
    return None


def screen(text: str, spans: Iterable[Span]) -> tuple[list[Span], list[tuple[Span, str]]]:
    """Spans kept (cut back from any medicine they ran into) and spans vetoed with their
    class (``medicine`` when the cut left nothing): the vetoed ones are the review app's
    near-misses (``near_miss.near_misses``), never logged."""
    kept: list[Span] = []
    dropped: list[tuple[Span, str]] = []
    for span in spans:
        cut = cut_medicine(text, span)
        if cut is None:
            dropped.append((span, "medicine"))
            continue
        reason = veto_class(text, cut)
        if reason is None:
            kept.append(cut)
        else:
            dropped.append((span, reason))
    return kept, dropped
