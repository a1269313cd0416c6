"""Veto classes: spans that are clinical, commercial or public terms, not identifiers.

Every recognizer's output (and the LLM pass's proposals) goes through these before masking,
so one class covers what any recognizer took by mistake. Each class is a kind of term, told
by its shape, its context or a published list, never by strings met in an evaluation set.
The classes come in families (``FAMILIES``), each a row of the coverage matrix's "Kept on
purpose" table (docs/DEIDENTIFICATION.md):

* products: ``product_code`` (a code after 国药准字, 型号, 批号 …) and ``brand_before_model``
  (a maker before a model number: 欧姆龙HEM-7136, 鱼跃YE660);
* medicines: ``dosage_or_food_form`` (a "name" ending in, or running into, a dosage or food
  form: …粉, …片, …茶; 某黑|鸭少吃), ``drug_stem`` (inside a chemical name or an INN stem:
  氯苯|那敏, 达格|列净), ``tcm_herb`` (a crude drug of the Pharmacopoeia, ``data/tcm_herbs.txt``),
  ``clinical_term_shape`` (``names.clinical_term_shaped``) and ``used_like_a_medicine`` (a
  taking verb before or a medicine's attribute after: 白加|黑的副作用, …按时吃); medicines the
  lexicon knows are cut out first (``cut_medicines``: class ``medicine``);
* clinical terms: ``eponym`` (a person's name in a disease, sign or point: X氏…, …综合征, …病,
  …征: 麦氏点, 墨菲征, 库欣综合征) and ``body_site`` (a side and a body part: 左膝…, 右手…);
* speech: ``dialect_pronoun_or_insurance`` (俺, 咱, 侬 …; 医保, 新农合, 门特 …);
* facilities: ``generic_facility`` (a kind of facility with no place or name in it: 社区医院,
  乡镇卫生院, 私人诊所);
* public figures: ``public_figure`` (a person named with a public office or honour: …院士,
  …总理). Policy: anyone named with a clinical, working or family title (医生, 主任, 教授,
  阿姨) stays masked however famous, since the clinician treating a patient identifies where
  care was given; a name with a public office or honour is a public figure speaking in public,
  kept, and shown to the reviewer as a suspect.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache
from importlib import resources
from typing import NamedTuple

from medrealmm.deid.cut_medicines import cut_medicine
from medrealmm.deid.names import (
    NAME_STOP,
    NOT_NAME_STARTS,
    clinical_term_shaped,
    used_like_a_drug,
)
from medrealmm.deid.recognizers.product_codes import product_code_at
from medrealmm.deid.spans import EntityType, Span, words

Veto = Callable[[str, Span], bool]


class VetoClass(NamedTuple):
    """One class: its name (the reviewer's reason), its family, the span types it can drop,
    and its test."""

    name: str
    family: str
    types: frozenset[EntityType]
    test: Veto


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


# Insurance schemes and their outpatient categories as patients say them (门特: 门诊特殊病,
# 门慢: 门诊慢性病): words of the system, never a person.
_INSURANCE_WORDS = tuple(
    words("门特 门慢 门大 慢特病 特慢病 门诊特殊 两病 大病医保 职工医保 居民医保")
)


def dialect_pronoun_or_insurance(text: str, span: Span) -> bool:
    return span.type is EntityType.NAME and span.text.startswith(
        (*NOT_NAME_STARTS, *_INSURANCE_WORDS)
    )


_FORM_END = re.compile(f"[{_HAN}](?:粉|片|丸|散|膏|液|剂|胶囊|颗粒|糖浆|冲剂|茶|酒|贴)$")


# A food the "name" runs into, then what is said of eating it (某黑|鸭少吃, 某记|鸡能喝吗):
# a food brand, not a person.
_FOOD_AFTER = re.compile("[鸭鸡鱼肉面饼粥汤茶酒奶糖粉](?:少|多|别|不|能|可以|要|吃|喝)")


def dosage_or_food_form(text: str, span: Span) -> bool:
    if span.type is not EntityType.NAME:
        return False
    if _FORM_END.search(span.text):
        return True
    return span.source in _UNCUED_SOURCES and bool(_FOOD_AFTER.match(text, span.end))


# Characters of chemical names (盐酸…, 马来酸氯苯…, 碳酸钙…) and the stems that begin no name.
_CHEMICAL_BEFORE = frozenset("酸苯氯溴碘氟钠钾钙镁锌铁铝铋胺醇酯酮烷烯嗪唑啶基")
_STEM_START = re.compile(
    "(?:那敏|沙星|西林|洛尔|普利|沙坦|他汀|替尼|单抗|霉素|环素|地平|替丁|拉唑|昔布|法林|西泮|唑仑|"
    "[唑胺酮醇嗪啶酚铵钠钾钙苷肟酯烷烯炔])"
)


# Stems of international nonproprietary names as Chinese writes them (-gliflozin 列净,
# rif- 利福, -giline 吉兰, -xaban 沙班, -gatran 加群, -setron 司琼, -triptan 曲坦, -caine 卡因,
# -penem 培南, cef- 头孢, -micin 米星, -vir 韦, -farin 法林, -prazole 拉唑, -lukast 司特,
# -profen 洛芬, -olol 洛尔, -glutide 鲁肽, -nide 奈德): two characters no given name holds together,
# anywhere in the span or the word it starts.
_STEM_INSIDE = re.compile(
    "列净|利福|吉兰|沙班|加群|司琼|曲坦|卡因|培南|头孢|米星|拉韦|格列|那非|法林|拉唑|司特|洛芬"
    "|洛尔|鲁肽|奈德"
)


def drug_stem(text: str, span: Span) -> bool:
    if span.type is not EntityType.NAME:
        return False
    glued = span.start > 0 and text[span.start - 1] in _CHEMICAL_BEFORE
    word = text[span.start : _word_end(text, span.end)]
    return glued or bool(_STEM_START.match(span.text)) or bool(_STEM_INSIDE.search(word))


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


@cache
def _herbs() -> re.Pattern[str]:
    """The Pharmacopoeia's crude drugs (``data/tcm_herbs.txt``), longest first."""
    table = resources.files("medrealmm.deid") / "data" / "tcm_herbs.txt"
    lines = table.read_text(encoding="utf-8").splitlines()
    names = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    return re.compile("|".join(sorted(names, key=len, reverse=True)))


# A dose after a herb (黄芪30g, 当归 10克, 陈皮三钱): a herb even after a cue.
_DOSE_AFTER = re.compile(r"\s?(?:[0-9.]+|[一二三四五六七八九十两半]+)\s?(?:g|克|钱|两|片|mg)")
_HERB_REACH = 4  # how far before the span a herb holding it may start (王不留|行 -> 王不留行)


def tcm_herb(text: str, span: Span) -> bool:
    """A span inside a herb's name, or one starting it (王不留 of 王不留行, 黄芪), for spans
    no cue introduced; after a cue (我叫…) only when a dose follows the herb."""
    if span.type is not EntityType.NAME:
        return False
    lo = max(0, span.start - _HERB_REACH)
    for found in _herbs().finditer(text, lo, span.end + _HERB_REACH):
        if found.start() > span.start:
            break
        if found.end() < span.end or found.end() - found.start() < 2:
            continue
        return span.source in _UNCUED_SOURCES or bool(_DOSE_AFTER.match(text, found.end()))
    return False


# What 氏 and a clinical word make of the name before them: a disease, sign, point or
# procedure (麦氏点, 墨菲氏征, 布鲁氏菌病, 巴氏染色).
_AFTER_SHI = re.compile(
    "[\u4e00-\u9fff]{0,2}?"
    "(?:点|征|症|病|综合征|综合症|试验|反射|染色|杆菌|菌|手术|线|三角|骨折|囊肿|小体|疝|环|法)"
)
_SHI_AFTER = re.compile("[\u4e00-\u9fff]{0,3}?氏")
# A disease word a name runs into (库欣|综合征, 帕金|森病, 川崎|病): one or two characters on
# at most, none of them a body part (李明|心脏病 is a person's illness), and no word running
# on after 病 or 征 (…病了, …病情, …征求).
_DISEASE_AFTER = re.compile(
    "(?:(?![心脏肝肺肾胃肠脑眼耳鼻皮骨血])[\u4e00-\u9fff]){0,2}?"
    "(?:综合征|综合症|(?:病|征)(?![了得倒重好情房人历区床号假友因变史程灶理毒菌求兵收集服]))"
)


def eponym(text: str, span: Span) -> bool:
    """A person's name in a disease, sign or point: 氏 and a clinical word in or after the
    span (麦氏点, 墨菲氏征), or, for spans no cue introduced, a disease word the name runs
    into (库欣综合征, 帕金森病)."""
    if span.type is not EntityType.NAME:
        return False
    inside = span.text.find("氏", 1)
    if inside > 0:
        return _AFTER_SHI.match(text, span.start + inside + 1) is not None
    shi = _SHI_AFTER.match(text, span.end)
    if shi is not None and _AFTER_SHI.match(text, shi.end()):
        return True
    return span.source in _UNCUED_SOURCES and bool(_DISEASE_AFTER.match(text, span.end))


# A side (左, 右, 双) before a body part: a site of the body, never a name (左膝肿, 右手麻).
_BODY_SITE = re.compile(
    "[左右双两][侧边]?(?:耳|眼|鼻|手|脚|足|腿|腰|背|胸|腹|肩|臂|肘|膝|踝|腕|指|趾|肺|肾|乳|颈|髋|下肢|上肢)"
)


def body_site(text: str, span: Span) -> bool:
    return span.type is EntityType.NAME and bool(_BODY_SITE.match(span.text))


# Kinds of facility and the generic words that come before them (社区, 乡镇, 县, 私人 …): a
# span made of these alone names no one facility. A city's or a province's hospital (市一院,
# 省人医) is one hospital: 市, 省 and ordinals are not generic.
_GENERIC_BEFORE = (
    "社区|街道|乡镇|乡|镇|村|县|私人|个体|个人|小|大|附近|当地|本地|公立|私立|民营|"
    "中医|中西医结合|口腔|牙科|眼科|皮肤科|儿童|妇幼|妇产|人民|综合|专科|三甲|二甲|普通|正规|"
    "黑|那家|这家|一家"
)
_FACILITY = (
    "医院|中医院|卫生院|卫生室|卫生所|诊所|门诊部|门诊|卫生服务中心|卫生服务站|服务站|保健院|保健所|"
    "医务室|药店|药房|大药房|体检中心|医疗中心"
)
_GENERIC_FACILITY = re.compile(f"(?:{_GENERIC_BEFORE})*(?:{_FACILITY})")


def generic_facility(text: str, span: Span) -> bool:
    """A kind of facility with no place or name in it (社区医院, 乡镇卫生院, 私人诊所)."""
    return _GENERIC_FACILITY.fullmatch(span.text) is not None


# Public offices and honours that name a public figure speaking in public (…院士说, …总理).
_PUBLIC_TITLE = re.compile(
    "(?:院士|总理|副总理|总书记|国家主席|主席|总统|首相|国务委员|部长|省长|市长)"
)


def public_figure(text: str, span: Span) -> bool:
    """A person named with a public office or honour right after the name (the policy is in
    the module docstring): kept, and a suspect for the reviewer."""
    return span.type is EntityType.NAME and bool(_PUBLIC_TITLE.match(text, span.end))


_NAME_ONLY = frozenset({EntityType.NAME})
_PLACES = frozenset({EntityType.HOSPITAL, EntityType.ORG})

#: Every class, in the order a span is tried against them (the first that answers names it).
CLASSES: tuple[VetoClass, ...] = (
    VetoClass("product_code", "product", frozenset(EntityType) - _NEVER_CODES, product_code),
    VetoClass(
        "brand_before_model",
        "product",
        frozenset({EntityType.NAME, EntityType.ORG}),
        brand_before_model,
    ),
    VetoClass("dialect_pronoun_or_insurance", "speech", _NAME_ONLY, dialect_pronoun_or_insurance),
    VetoClass("dosage_or_food_form", "medicine", _NAME_ONLY, dosage_or_food_form),
    VetoClass("drug_stem", "medicine", _NAME_ONLY, drug_stem),
    VetoClass("tcm_herb", "medicine", _NAME_ONLY, tcm_herb),
    VetoClass("eponym", "clinical term", _NAME_ONLY, eponym),
    VetoClass("body_site", "clinical term", _NAME_ONLY, body_site),
    VetoClass("clinical_term_shape", "medicine", _NAME_ONLY, clinical_term_shape),
    VetoClass("used_like_a_medicine", "medicine", _NAME_ONLY, used_like_a_medicine),
    VetoClass("generic_facility", "facility", _PLACES, generic_facility),
    VetoClass("public_figure", "public figure", _NAME_ONLY, public_figure),
)
VETOES: tuple[tuple[str, Veto], ...] = tuple((c.name, c.test) for c in CLASSES)
#: Classes whose drops a reviewer is shown as suspects: judgement calls (a public figure, a
#: brand used like a medicine, a word shaped like a clinical term). The others are sure of
#: what they dropped (a lexicon medicine, a drug stem, a dosage or food form, an eponym, a
#: product code).
SHOWN_CLASSES = frozenset(
    {
        "public_figure",
        "used_like_a_medicine",
        "clinical_term_shape",
        "generic_facility",
    }
)
#: The family of each class and of ``medicine`` (the lexicon's cut): the matrix's rows.
FAMILIES: dict[str, str] = {c.name: c.family for c in CLASSES} | {"medicine": "medicine"}

# The classes each type can fall in, in ``CLASSES`` order: most spans are dates, numbers and
# places, for which all but one class would answer no at once.
_BY_TYPE: dict[EntityType, tuple[tuple[str, Veto], ...]] = {
    kind: tuple((c.name, c.test) for c in CLASSES if kind in c.types) for kind in EntityType
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
