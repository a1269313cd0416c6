"""Spans cut back where they run into a medicine.

A name recognizer (a model, a segmenter's person tag, the LLM pass) that meets a brand or a
drug takes a piece of it: 白加|黑, 汤臣|倍健, 氯苯|那敏, or a whole herb with its dose
(田七0.5g). Masking that piece loses a clinical term and hides no one. This module knows the
medicines by a lexicon (brands, patent medicines and makers whose names look like people's
names, written for the purpose, plus the herb and brand words of ``names.CLINICAL_LEXICON``)
and cuts a span to what lies outside them; ``term_vetoes`` then judges what is left by shape.
"""

from __future__ import annotations

import re
from functools import cache

from medrealmm.deid.names import CLINICAL_LEXICON
from medrealmm.deid.spans import EntityType, Span, words

# Over-the-counter brands, supplements, patent medicines and their makers, as they are said
# in consultations: read by a segmenter or a person-name model as a surname + given name (白加黑,
# 汤臣倍健, 斯达舒) or as an organisation. Brands that are also plausible given names (安婷,
# 欣康, 美林) are left out: a name with such a given part must stay masked.
BRANDS = frozenset(
    words(
        # cold, fever and pain
        "白加黑 新康泰克 康泰克 泰诺 泰诺林 感康 快克 小快克 感冒灵 三九感冒灵 999感冒灵 "
        "感冒清热 维C银翘 银翘解毒 连花清瘟 莲花清瘟 板蓝根 抗病毒口服液 芬必得 扶他林 散利痛 "
        "必理通 百服宁 布洛芬 对乙酰氨基酚 去痛片 正痛片 "
        # cough and throat
        "急支糖浆 强力枇杷露 川贝枇杷膏 念慈菴 念慈庵 潘高寿 京都念慈菴 沐舒坦 易坦静 惠菲宁 "
        "可瑞康 金嗓子 西瓜霜 草珊瑚 华素片 咽炎片 "
        # stomach and bowels
        "吗丁啉 斯达舒 达喜 胃必治 三九胃泰 养胃舒 整肠生 妈咪爱 思密达 培菲康 金双歧 "
        "丽珠得乐 健胃消食片 江中健胃消食片 藿香正气 藿香正气水 保济丸 开塞露 乳果糖 杜密克 "
        # skin and allergy
        "息斯敏 开瑞坦 仙特明 达克宁 皮炎平 派瑞松 百多邦 京万红 湿润烧伤膏 红霉素软膏 "
        "风油精 清凉油 万金油 红花油 正红花油 白花油 驱风油 活络油 曼秀雷敦 "
        # patent medicines (中成药)
        "云南白药 片仔癀 安宫牛黄丸 六味地黄丸 乌鸡白凤丸 逍遥丸 复方丹参滴丸 速效救心丸 "
        "牛黄解毒片 牛黄上清丸 双黄连 蒲地蓝 丁桂儿脐贴 龙角散 阿胶 东阿阿胶 东阿 "
        # supplements and health products
        "汤臣倍健 善存 钙尔奇 迪巧 巨能钙 盖中盖 养生堂 脑白金 黄金搭档 纽崔莱 "
        "安利纽崔莱 碧生源 红桃K 太太口服液 静心口服液 汇仁肾宝 肾宝 "
        # makers and pharmacy chains said for their products
        "同仁堂 九芝堂 胡庆余堂 马应龙 王老吉 加多宝 白云山 康恩贝 哈药 修正药业 仁和药业 "
        "葵花药业 小葵花 太极集团 三精 "
        # prescription brands patients name
        "优甲乐 拜新同 络活喜 波依定 倍他乐克 安博维 洛汀新 立普妥 拜阿司匹灵 波立维 格华止 "
        "拜糖平 诺和灵 诺和锐 来得时 优泌乐 甘舒霖 达美康 亚莫利 万艾可 希爱力 舒降之 "
        "乐瑞卡 百忧解 左洛复 黛力新 思诺思 耐信 洛赛克 达菲 优思明 妈富隆 毓婷 "
        "欧姆龙 鱼跃 三诺 雅培 拜耳 辉瑞 诺华 赛诺菲 默沙东 阿斯利康 葛兰素史克"
    )
)

MEDICINES = BRANDS | CLINICAL_LEXICON

# Types a medicine can be mistaken for: a person or an organisation. Structured identifiers,
# hospitals, addresses and dates are never cut.
_CUT_TYPES = frozenset({EntityType.NAME, EntityType.ORG})
_HAN = re.compile("[\u4e00-\u9fff]")
# A dose inside a span: digits and a unit (0.5g, 2 粒, 10ml).
_DOSE = re.compile(
    r"\s*\d+(?:\.\d+)?\s*(?:mg|g|ml|μg|ug|iu|u|片|粒|袋|支|丸|包|克|毫克|毫升|单位)(?![A-Za-z])",
    re.IGNORECASE,
)


@cache
def _medicine_re() -> re.Pattern[str]:
    ordered = sorted(MEDICINES, key=len, reverse=True)  # the longest word at each position
    return re.compile("|".join(re.escape(w) for w in ordered))


_LONGEST = max(len(w) for w in MEDICINES)


def medicines_near(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Lexicon medicines that overlap ``text[start:end]``."""
    lo, hi = max(0, start - _LONGEST + 1), min(len(text), end + _LONGEST - 1)
    return [
        (m.start(), m.end())
        for m in _medicine_re().finditer(text, lo, hi)
        if m.start() < end and start < m.end()
    ]


def _han_count(text: str) -> int:
    return len(_HAN.findall(text))


def cut_medicine(text: str, span: Span) -> Span | None:
    """``span`` without the medicine it runs into: None when nothing of a name or an
    organisation is left, the span itself when it touches no medicine."""
    if span.type not in _CUT_TYPES:
        return span
    start, end = span.start, span.end
    if span.type is EntityType.ORG:
        # A maker's name inside an employer (云南白药集团, 白云山制药厂) is the employer: an
        # organisation goes only when it is the medicine itself.
        near = medicines_near(text, start, end)
        return None if any(a <= start and end <= b for a, b in near) else span
    if span.type is EntityType.NAME:
        dose = _DOSE.search(text, start, end)
        if dose is not None:
            end = dose.start()  # 田七0.5g: no name holds a dose
    for m_start, m_end in medicines_near(text, start, end):
        if m_start <= start:
            start = max(start, m_end)  # 白加|黑, 汤臣|倍健: the span begins inside a medicine
        elif _han_count(text[start:m_start]) >= 2:
            end = min(end, m_start)  # 张伟|汤臣倍健: the name before a medicine stays
    if (start, end) == (span.start, span.end):
        return span
    if start >= end or _han_count(text[start:end]) < 2:
        return None
    return span.model_copy(update={"start": start, "end": end, "text": text[start:end]})
