"""Hospitals and clinics, in simplified and traditional characters: by their full name with an
institution word (…医院, …卫生院, …卫生室, …社区卫生服务中心, …醫院), by a colloquial short name
in context (石桥人医, 东莞一院, 市一院, 省二院, 浙一, 省妇幼), chains by their branch (爱尔眼科
朝阳店), and names known across the country by a short form (协和, 天坛, 301).
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
    "(?:卫生服务|医疗|体检|医学|康复|急救|诊疗|健康管理|透析|影像|妇幼保健)中心|"
    "醫院|診所|衛生院|門診部|口腔門診部?|醫務室|衛生室|衛生所|齒科|衛生服務站|服務站|"
    "(?:衛生服務|醫療|體檢|醫學|康復|急救|診療|健康管理|透析|影像|婦幼保健)中心"
)
# The characters a suffix starts with, checked first: the groups (…中心) keep the regex engine
# from deriving them itself, and the anchor's scan of every text was most of its cost.
_SUFFIX_FIRST = "(?=[医诊卫门口保齿服体康急健透影妇醫診衛門齒體婦])"
_HOSPITAL_RE = re.compile(
    # A Latin brand may lead a private clinic's name (ABC口腔诊所).
    rf"(?P<name>(?:[A-Za-z]{{2,8}})?{cjk_proper(1, 18, HOSPITAL_STOP, not_in=_HOSPITAL_SUFFIX)})"
    rf"(?P<suffix>{_HOSPITAL_SUFFIX})(?:[{CJK}]{{0,4}}?(?:分院|院区|院區))?"
)
_GENERIC_ORG_WORDS = sorted(
    words(
        "之前 以前 上次 那个 这个 "
        "当地 附近 大 小 正规 三甲 二甲 三级 二级 一级 综合 专科 私立 公立 民营 上级 下级 本地 "
        "这家 那家 哪家 别的 其他 其它 基层 社区 乡镇 县级 市级 省级 县 市 省 儿童 妇幼 中医 "
        "中西医结合 "
        "口腔 眼科 皮肤科 皮肤病 精神病 精神 肿瘤 传染病 专业 大型 小型 网上 互联网 线下 线上 就近 "
        "全国 国内 国外 外地 老家 好 一家 几家 两家 各大 各 定点 指定 家附近 单位 学校 动物 宠物 "
        "整形 美容 医疗 男科 妇科 产科 儿科 牙科 心血管 骨科 结核病 人民 第 新 "
        # the same generic words in traditional characters
        "當地 這家 那家 哪家 別的 這個 那個 以前 縣級 市級 省級 縣 兒童 婦幼 中醫 中西醫結合 "
        "皮膚科 皮膚病 腫瘤 傳染病 專業 專科 綜合 私立 公立 民營 上級 網上 互聯網 線下 線上 國內 "
        "國外 定點 學校 動物 寵物 醫療 婦科 產科 兒科 骨科 結核病 社區 鄉鎮 縣級 大型 小型 各大"
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
    if _PROVINCIAL.fullmatch(name):
        return True  # 省人民医院, 省妇幼保健院: a province has one, as 省妇幼 says
    return len(rest) >= 2 or _starts_with_place(name)


# A province's one hospital of a kind (省人民医院, 省中医院, 省肿瘤医院); a county or a city is
# often only the speaker's own (去县中医看看, 本县人民医院) and stays, as do 省内 and 省级.
_PROVINCIAL = re.compile(
    r"省立?(?:人民|中医|中醫|中西医结合|妇幼|婦幼|妇幼保健|婦幼保健|肿瘤|腫瘤|儿童|兒童|妇女儿童|"
    r"胸科|口腔|眼科|精神卫生|传染病|结核病|骨科)?"
)


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
    anchor=re.compile(_SUFFIX_FIRST + f"(?:{_HOSPITAL_SUFFIX})"),
    reach=(20, 8),
)

# Colloquial short names (石桥人医, 东莞一院, 通辽妇幼, 福州中医, 岳县中医): a place of 2-3
# characters or a county, city or district name, and a short institution word, after a
# going-to cue or at the start of a document line, and before what people do there; 看中医,
# 去妇幼 or 去县中医 alone has no place in front. A department after it counts as what people
# do there (中山一院皮肤科).
_SHORT_SUFFIX = (
    "人医|人醫|一院|二院|三院|四院|五院|六院|七院|八院|九院|附一|附二|附院|妇幼|婦幼|中医|中醫"
)
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
            r"|整形|体检|产检|生的|出生|分娩|输液|打针|拿药|取药|治疗|抽血|化验|透析|急诊|手术"
            # …or one of its departments (中山一院皮肤科, 东莞一院心内科)
            rf"|(?:(?![{HOSPITAL_STOP}])[{CJK}]){{1,3}}科(?![学技普])"
            r")"
        )
    ],
)

# What people do at a hospital, or one of its departments or staff, right after its short
# name: what tells 去天坛看病 from 去天坛公园.
_AT_HOSPITAL = (
    r"看|就诊|就診|住院|检查|檢查|复查|複查|复诊|複診|做|开|開|挂|掛|排|查|拍|取|拿|约|約|治|手术|手術|"
    r"医生|醫生|大夫|专家|專家|门诊|門診|急诊|急診|病房|整形|体检|體檢|产检|產檢|输液|輸液|"
    r"打针|打針|抽血|化验|化驗|透析|生的|出生|分娩|"
    # what the hospital said, and where it is (离湘雅三近, 同济说是…, 喺协和睇咗: Cantonese)
    r"说|說|讲|講|话|話|睇|近|远|遠|不远|不遠|旁边|旁邊|附近|对面|對面|那边|那邊|"
    rf"(?:(?![{HOSPITAL_STOP}])[{CJK}]){{1,3}}科(?![学學技普])"
)
# Hospitals known across the country by a short name (在瑞金做的胃镜, 去协和看, 到301复查, 天坛的
# 心内科): a gazetteer, in both scripts. After a going-to cue and before what people do
# there, or after a clause start and before a department or a doctor, since 瑞金 alone is a
# city and 同济 a university.
FAMOUS_HOSPITAL_NAMES = words(
    "协和 華西 华西 湘雅 瑞金 华山 華山 齐鲁 齊魯 同济 同濟 中山一院 中山二院 中山三院 中山六院 "
    "中山医 北医三院 北大一院 北大三院 北大六院 北大人民 北大医院 301 302 304 305 306 307 309 "
    "浙一 浙二 邵逸夫 湘雅二院 湘雅三院 湘雅附二 华西二院 天坛 天壇 宣武 安贞 安貞 阜外 积水潭 "
    "積水潭 同仁 西京 唐都 仁济 仁濟 长海 長海 长征 長征 新华 中南 儿研所 兒研所 协和医 協和 "
    "省人医 苏北人医 南方医院 珠江医院 湘雅医院 华西医院 "
    # Taiwan, Hong Kong and Macau, as the recognizers read them (``text.plain_text``: 榮總 as 荣总)
    "台大 北荣 中荣 高荣 荣总 三总 马偕 长庚 国泰 亚东 奇美 慈济 玛丽 伊利沙伯 威尔斯 屯门 "
    "镜湖 仁伯爵"
)
# A famous group's stem and the ordinal of its hospital (湘雅三, 中山一, 北大六院).
_FAMOUS_STEMS = "湘雅|中山|北大|华西|浙大|川大|齐鲁|协和|同济|中南|南方|复旦|交大|华山|瑞金"
_FAMOUS = (
    rf"(?:{_FAMOUS_STEMS})[一二三四五六七八九](?:院|医院|醫院|附院)?(?![一二三四五六七八九十])|"
    + "|".join(sorted(FAMOUS_HOSPITAL_NAMES, key=len, reverse=True))
)
# Where a hospital's short name follows: a going-to word, 离 (distance), 喺 (Cantonese 在),
# 去的/到的 (去的同济，…).
_BEFORE_HOSPITAL = r"(?:(?<=[在去到于於找从從转轉离離喺])|(?<=去的)|(?<=到的)|(?<=在的))"
FAMOUS_HOSPITAL = RegexRecognizer(
    name="famous_hospital",
    gate=re.compile(_FAMOUS),
    type=EntityType.HOSPITAL,
    patterns=[
        re.compile(rf"{_BEFORE_HOSPITAL}(?:{_FAMOUS})(?=的|[，,。！!？?]|$|{_AT_HOSPITAL})"),
        re.compile(
            r"(?:^|(?<=[\s，,。！？!?；;：:、]))"
            rf"(?:{_FAMOUS})(?=的?(?:医生|醫生|大夫|专家|專家|门诊|門診|急诊|急診|病房|报告|報告|"
            r"说|說|话|話|讲|講|又说|又說|"
            rf"(?:(?![{HOSPITAL_STOP}])[{CJK}]){{1,3}}科(?![学學技普])))"
        ),
    ],
)

# Hospitals by their ordinal, with or without the level of government that runs them (市一院,
# 省二院, 市一医, 在六院复查, 浙一): in context as above; also a province's one hospital of a
# kind (省妇幼, 省人医, 省中医, 省肿瘤). Not a county's or city's 中医 or 妇幼: 去县中医看看 is
# any county's.
_PROVINCES = (
    "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼滬雲遼魯蘇贛晉陝閩貴粵寧瓊"
)
_ORDINAL_HOSPITAL = (
    rf"(?:[省市县縣区區{_PROVINCES}]?[一二三四五六七八九十]{{1,2}}(?:院|医院|醫院|医|醫|附院)(?!子)"
    r"|附[一二三四五六七八九]院?|[一二三四五六七八九]附院"
    r"|[省市][一二三四五六七八九十]|省(?:妇幼|婦幼|人医|人醫|中医|中醫|肿瘤|腫瘤|儿童|兒童|胸科))"
)
ORDINAL_HOSPITAL = RegexRecognizer(
    name="ordinal_hospital",
    gate=re.compile(r"[一二三四五六七八九十](?:院|医|醫|附)|附[一二三四五六七八九]|省|市"),
    type=EntityType.HOSPITAL,
    patterns=[
        re.compile(
            rf"(?:{_BEFORE_HOSPITAL}|(?<=住进)|(?<=住進)|^|(?<=[\s，,。！？!?；;：:、]))"
            rf"{_ORDINAL_HOSPITAL}(?=的|{_AT_HOSPITAL})"
        ),
        # a province's short name and an ordinal (浙一, 苏二) only after a going-to cue
        re.compile(
            rf"(?<=[在去到于於找从從转轉])[{_PROVINCES}][一二三四五六七八九](?=的|{_AT_HOSPITAL})"
        ),
    ],
)

# A chain by its branch (爱尔眼科朝阳店, 美年大健康望京分院, 瑞尔齿科（国贸诊所）): a brand, a
# medical word and the branch: each branch is one place, where the patient was seen.
HOSPITAL_BRANCH = RegexRecognizer(
    name="hospital_branch",
    gate=re.compile(r"店|分院|院区|院區|分部|诊所|診所"),
    type=EntityType.HOSPITAL,
    patterns=[
        re.compile(
            rf"{cjk_proper(2, 6, HOSPITAL_STOP)}"
            r"(?:眼科|口腔|齿科|齒科|体检|體檢|健康|医美|醫美|中医馆|中醫館|国医馆|國醫館|医疗|醫療|"
            r"妇产|婦產|儿科|兒科|皮肤|皮膚|牙科|康复|康復)"
            r"[(（]?"
            rf"{cjk_proper(2, 6, HOSPITAL_STOP)}"
            r"(?:店|分院|院区|院區|分部|诊所|診所|分店|门店|門店)[)）]?"
        )
    ],
)
