"""Hospitals and clinics: by their full name with an institution word, by a colloquial short
name in context, and names known across the country by a short form.
"""

from __future__ import annotations

import re

from medrealmm.deid.names import SURNAME_RE, WORDLIKE_SURNAMES
from medrealmm.deid.recognizer import RegexRecognizer
from medrealmm.deid.recognizers.common import (
    CJK,
    HOSPITAL_STOP,
    cjk_proper,
    common_word,
)
from medrealmm.deid.spans import EntityType, words

_HOSPITAL_SUFFIX = (
    "医院|诊所|卫生院|门诊部|口腔门诊部?|保健院|保健所|医务室|卫生室|卫生所|齿科|卫生服务站|服务站|"
    "(?:卫生服务|医疗|体检|医学|康复|急救|诊疗|健康管理|透析|影像|妇幼保健)中心"
)
_HOSPITAL_RE = re.compile(
    # A Latin brand may lead a private clinic's name (ABC口腔诊所).
    rf"(?P<name>(?:[A-Za-z]{{2,8}})?{cjk_proper(1, 18, HOSPITAL_STOP, not_in=_HOSPITAL_SUFFIX)})"
    rf"(?P<suffix>{_HOSPITAL_SUFFIX})(?:[{CJK}]{{0,4}}?(?:分院|院区))?"
)
_GENERIC_ORG_WORDS = sorted(
    words(
        "之前 以前 上次 那个 这个 "
        "当地 附近 大 小 正规 三甲 二甲 三级 二级 一级 综合 专科 私立 公立 民营 上级 下级 本地 "
        "这家 那家 哪家 别的 其他 其它 基层 社区 乡镇 县级 市级 省级 县 市 省 儿童 妇幼 中医 "
        "中西医结合 "
        "口腔 眼科 皮肤科 皮肤病 精神病 精神 肿瘤 传染病 专业 大型 小型 网上 互联网 线下 线上 就近 "
        "全国 国内 国外 外地 老家 好 一家 几家 两家 各大 各 定点 指定 家附近 单位 学校 动物 宠物 "
        "整形 美容 医疗 男科 妇科 产科 儿科 牙科 心血管 骨科 结核病 人民 第 新"
    ),
    key=len,
    reverse=True,
)
_GENERIC_ORG_RE = re.compile("|".join(_GENERIC_ORG_WORDS))


_PLACE_TAGS = frozenset({"ns", "nt", "nz", "j"})


def _starts_with_place(name: str) -> bool:
    """A place word heads the name (大冶…, 华西…): stripping generic characters such as 大 out
    of it must not turn it into a generic mention."""
    from medrealmm.deid.names import word_tag  # jieba's dictionary, loaded on first use

    return any(
        name[:n] not in _GENERIC_ORG_WORDS and word_tag(name[:n]) in _PLACE_TAGS
        for n in (2, 3)
        if len(name) >= n
    )


# One character and 县 or 市 name a county or city (沛县, 萧县, 津市), whether or not the
# dictionary knows it; 本县, 该市, 邻县 are mentions of the speaker's own or another one.
_ONE_CHARACTER_PLACE = re.compile(
    rf"(?![本我该这那邻外全各同此某上下几哪每其县市区一二三四五六七八九十两])[{CJK}][县市]"
    rf"(?![{CJK}]?[县市区])"
)
_OWNER_RE = re.compile(rf"{SURNAME_RE}[氏记]?")
_CLINIC_SUFFIXES = frozenset(words("诊所 门诊部 口腔门诊 口腔门诊部 齿科"))


def named_institution(name: str, suffix: str = "") -> bool:
    """Whether ``name`` (what precedes the institution word ``suffix``) names one institution,
    not a generic mention such as 当地医院 or 三甲医院. Shared by the rules and the NER."""
    rest = _GENERIC_ORG_RE.sub("", name)
    owner = _OWNER_RE.fullmatch(rest)
    if owner and suffix in _CLINIC_SUFFIXES and (rest[0] not in WORDLIKE_SURNAMES or "氏" in rest):
        return True  # 李氏口腔门诊, 孟口腔诊所, 竺齿科, 向氏诊所: a clinic named by its owner
    if _ONE_CHARACTER_PLACE.match(name) and not common_word(name[:2]):
        return True  # 沛县人民医院, 津市中医院: a county or city of one character
    if re.search(r"第[一二三四五六七八九十\d]+", name):
        return True
    return len(rest) >= 2 or _starts_with_place(name)


def split_institution(text: str) -> tuple[str, str]:
    """``text`` without its institution words, and the last of them (县人民医院 -> 县人民, 医院)."""
    suffixes = list(_SUFFIX_RE.finditer(text))
    return _SUFFIX_RE.sub("", text), suffixes[-1].group() if suffixes else ""


_SUFFIX_RE = re.compile(_HOSPITAL_SUFFIX)


def _proper_hospital(match: re.Match[str]) -> EntityType | None:
    named = named_institution(match.group("name"), match.group("suffix"))
    return EntityType.HOSPITAL if named else None


HOSPITAL = RegexRecognizer(
    name="hospital",
    type=EntityType.HOSPITAL,
    patterns=[_HOSPITAL_RE],
    validate=_proper_hospital,
    anchor=re.compile(_HOSPITAL_SUFFIX),
    reach=(20, 8),
)

# Colloquial short names (石桥人医, 东莞一院, 通辽妇幼, 福州中医, 岳县中医): a place of 2-3
# characters or a county, city or district name, and a short institution word, after a
# going-to cue or at the start of a document line, and before what people do there; 看中医,
# 去妇幼 or 去县中医 alone has no place in front. A department after it counts as what people
# do there (中山一院皮肤科).
_SHORT_SUFFIX = "人医|一院|二院|三院|四院|五院|附一|附二|附院|妇幼|中医"
HOSPITAL_SHORT = RegexRecognizer(
    name="hospital_short",
    gate=re.compile(_SHORT_SUFFIX),
    type=EntityType.HOSPITAL,
    patterns=[
        re.compile(
            rf"(?:(?<=[在去到于离转])|(?<=住进)|^|(?<=[\s:：]))"
            rf"(?:{cjk_proper(1, 3, HOSPITAL_STOP + '看找请县市区镇省')}[县市区]"
            rf"|{cjk_proper(2, 3, HOSPITAL_STOP + '看找请县市区镇省')})(?:{_SHORT_SUFFIX})"
            r"(?=看|住院|就诊|检查|复查|做|开|挂|的|拍|查|比较|很近|门诊|检验|收费|报告|医学|处方"
            # …or one of its departments (中山一院皮肤科, 东莞一院心内科)
            rf"|(?:(?![{HOSPITAL_STOP}])[{CJK}]){{1,3}}科(?![学技普])"
            r")"
        )
    ],
)

# Hospitals known across the country by a short name (在瑞金做的胃镜, 去协和看, 到301复查): after
# a going-to cue and before what people do there, since 瑞金 alone is a city and 同济 a
# university.
FAMOUS_HOSPITAL_NAMES = words(
    "协和 华西 湘雅 瑞金 华山 齐鲁 同济 中山一院 北医三院 北大人民 301 浙一 浙二 湘雅二院 华西二院"
)
FAMOUS_HOSPITAL = RegexRecognizer(
    name="famous_hospital",
    gate=re.compile("|".join(FAMOUS_HOSPITAL_NAMES)),
    type=EntityType.HOSPITAL,
    patterns=[
        re.compile(
            rf"(?<=[在去到于])(?:{'|'.join(sorted(FAMOUS_HOSPITAL_NAMES, key=len, reverse=True))})"
            r"(?=看|就诊|住院|检查|复查|做|开|挂|的)"
        )
    ],
)
