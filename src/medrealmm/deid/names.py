"""Personal names: surname-led candidates confirmed by context cues or by jieba's ``nr`` tag.

Cheap checks come first so the statistical tagger runs only where a name is plausible: a
surname character that does not start (or end) an ordinary dictionary word. That keeps the
rule path fast and stops words like 两周, 高热 or 谢谢 from turning into names.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from medrealmm.deid.latin_names import HONORIFIC, NAME_TAIL, pinyin_name_at
from medrealmm.deid.recognizer import gated, starts_with_one_of
from medrealmm.deid.spans import EntityType, Span, words

SINGLE_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝"
    "龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞"
    "左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕"
    "屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧"
    "闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝"
    "傅萧阎冼奚谌鄢栗檀禹湛辜尧卿鹿"
)
# Rarer Hundred-Family surnames: many are ordinary words too, so only a context cue (a title
# after, a form label or 我叫 before) makes them a name, never the tagger alone (those not
# listed above join ``AMBIGUOUS_SURNAMES``). Not ``RARE_SURNAMES`` below, the cue-only list.
_RARER_HUNDRED_FAMILY = (
    "狄融巢伊经干牧满危元步竺奉惠郗班仰秋暴厉戎祖束幸韶郜蓟薄邰鄂索咸籍赖蔺屠阴胥苍闻莘贡劳"
    "逄扶堵宰郦雍璩濮寿扈燕冀郏浦习宦鱼容慎戈庾暨衡弘匡禄阙殳沃蔚越夔厍晁勾訾阚鞠须丰蒯荆权"
    "逯盖桓於钮嵇虞邴乜缑亢况郝鲜储汲邸糜松井富乌焦巴弓隗山谈宋茅庞熊纪舒屈项祝董梁杜阮"
)
# The commonest surnames in traditional characters (陳, 張, 劉 …), as Hong Kong, Macau and
# Taiwan write them; the simplified forms are above.
TRADITIONAL_SURNAMES = "陳張劉黃楊趙吳孫馬鄭謝韓馮鄧蕭葉蘇呂盧蔣賈許鍾譚錢羅鄒龔嚴顧聶溫湯戴陸歐陽"
SINGLE_SURNAMES += "".join(
    c for c in dict.fromkeys(TRADITIONAL_SURNAMES) if c not in SINGLE_SURNAMES
)
_RARE_ONLY = "".join(sorted(set(_RARER_HUNDRED_FAMILY) - set(SINGLE_SURNAMES)))
SINGLE_SURNAMES += _RARE_ONLY
COMPOUND_SURNAMES = words(
    "欧阳 司马 上官 诸葛 东方 皇甫 令狐 慕容 尉迟 公孙 夏侯 司徒 端木 长孙 宇文 轩辕 澹台 南宫 "
    "司空 闻人 呼延 万俟 独孤 百里 东郭 西门 钟离 宗政 濮阳 淳于 单于 太叔 申屠 公冶 仲孙 "
    "乐正 拓跋 赫连 左丘 梁丘 第五 谷梁 羊舌 微生 漆雕 壤驷 公良 巫马 亓官 司寇 段干 鲜于"
)
SURNAME_RE = "(?:" + "|".join(COMPOUND_SURNAMES) + f"|[{SINGLE_SURNAMES}])"
# Characters that do not occur in given names but do follow names in running text.
NAME_STOP = set(
    "的了是在和与及就也都还又说今年岁男女我你您他她它们这那有没不很太请问谢医生患者病人住家从到去来"
    "吗呢吧啊呀哦嗯给让被把对向跟叫做看开吃用打已经刚才因为所以但是如果最近前后天月日号周时点分"
)
_CJK = "\u4e00-\u9fff"
_GIVEN = f"[{_CJK}]"
SURNAME = re.compile(SURNAME_RE)  # a single or compound surname at a position
_FULL_NAME = re.compile(f"{SURNAME_RE}{_GIVEN}{{1,2}}")  # a surname, one or two given

BEFORE_CUES = (
    "我叫|我是|名叫|叫做|姓名|患者|病人|病患|患儿|家属|联系人|签名|签字|本人|就诊人|"
    "宝宝叫|孩子叫|女儿叫|儿子叫|老公叫|老婆叫|爱人叫|丈夫叫|妻子叫|父亲叫|母亲叫|"
    "主治医生|主治医师|主管医生|接诊医生|检验者|审核者|报告医生|医师签名|医师|收件人|"
    # Form labels on reports, prescriptions and invoices.
    "送检医生|送检医师|受检者|受检人|交款人|缴款人|就诊人|审核医师|审核医生|开单医生|开方医生|"
    "检验医师|复核者|收款人|领药人|患者姓名|病人姓名|"
    # Kinship: a relative named right after the word for them.
    "奶奶|爷爷|外婆|外公|姥姥|姥爷|我妈|我爸|妈妈|爸爸|老公|老婆|爱人|丈夫|妻子|婆婆|公公|"
    "岳母|岳父|女儿|儿子|孙子|孙女|家父|家母|孩子他爸|孩子他妈|弟弟|妹妹|哥哥|姐姐|代|"
    "前夫|前妻|表姐|表哥|表妹|表弟|堂姐|堂哥|堂妹|堂弟|嫂子|弟媳|姐夫|妹夫|女婿|儿媳|舅舅|舅妈|"
    "姑姑|姑父|姨妈|姨父|婶婶|伯伯|伯母|未婚夫|未婚妻|男朋友|女朋友|男友|女友|对象|闺蜜|"
    # People close by, and the labels booking and consultation forms use.
    "朋友|同事|邻居|室友|同学|领导|预约人|问诊人|咨询人|申请人|监护人|陪诊人|陪护人|被保险人|"
    "家长|我姐|我哥|我弟|我妹|我姨|我舅|我叔|我婶|我姑"
)
AFTER_TITLES = (
    "医生|大夫|医师|主任|护士|护士长|教授|院长|老师|先生|女士|小姐|阿姨|叔叔|同学|师傅|"
    # At work (刘总, 王经理): a surname and a title name a colleague as well as a first name.
    "总|经理|总监|老板|科长|处长|局长|主管|"
    # Traditional characters (陳醫生, 林護士長).
    "醫生|醫師|護士|護士長|院長|老師|師傅"
)

# Rarer surnames of the Hundred Family list: after a cue only (我是满…, 我妈牧…), never alone,
# because as bare characters they are mostly ordinary words.
RARE_SURNAMES = "".join(
    sorted(
        set(
            "赖仝亓堵幸帅揭逯晋楚闻茅蔺储芮仉綦羊訾汲邴糜井富巴弓牧隗仰秋伊暴钭厉戎祖束韶郜"
            "蓟薄印宿怀邰鄂索咸籍屠阴郁胥苍莘贡劳逄扶宰郦雍却璩濮寿扈燕冀郏浦别充慕茹习宦"
            "鱼容慎戈庾暨衡步耿满弘匡寇禄阙殳沃蔚夔隆厍晁勾融阚乜鞠须巢蒯荆竺权盖桓元危惠"
            "酆宓邸贝臧计伏谈强支昝经裘干宣贲杭洪诸钮嵇滑荀於羿乌"
            # Surnames in Faker's and mimesis' lists that are ordinary words too (楼, 官, 海,
            # 国); none that is a function word (来, 从, 但, 都), which a cue is often followed
            # by, nor a syllable of drug and disease names (斯达舒, 库欣, 阿莫西林).
            "楼官廉展战敬宾封居初修粟练皮豆衣闭盘植朴普智银门海国原南区公云乐玉呼冶尉"
            "漆赫东养凤双广库昌水益空红蓬通花平相利信"
        )
        - set(SINGLE_SURNAMES)
    )
)
_ANY_SURNAME_RE = f"(?:{SURNAME_RE}|[{RARE_SURNAMES}])"
# On a form (report, prescription, invoice) the label says the value is a person, whatever
# the surname: any two to four characters up to the next separator or label.
FORM_LABELS = (
    "姓名|患者姓名|病人姓名|送检医生|送检医师|申请医生|申请医师|开单医生|开方医生|报告医生|"
    "检验者|检验人|检验医师|审核者|审核人|审核医师|复核者|复核人|受检者|受检人|交款人|缴款人|"
    "就诊人|收款人|领药人|收件人|联系人|签名|医师签名|报告人|操作者|记录者|配药人|发药人|"
    "家长|监护人|预约人|问诊人|咨询人|陪诊人|申请人"
)
_NEXT_FIELD = "性别|年龄|科室|床号|病区|电话|联系|住院|门诊|日期|时间|编号|单位|诊断"
_NEXT_FIELD_RE = re.compile(_NEXT_FIELD)
_BLANK_VALUE = frozenset("未无不空略待见同")
_LABEL_RE = re.compile(
    starts_with_one_of(FORM_LABELS)
    + rf"(?:{FORM_LABELS})(?:信息)?[ \t]*[:：]?[ \t]*(?P<name>[{_CJK}]{{2,4}}?)"
    rf"(?=[\s,，。;；:：|/()（）]|$|{_NEXT_FIELD})"
)
# After the cue: an optional 是/叫/为 (病人是…), then a full name or a nickname (交款人：小于).
_CUE_LEAD = starts_with_one_of(BEFORE_CUES) + rf"(?:{BEFORE_CUES})\s*[:：]?\s*(?:是|叫|为)?\s*"
_BEFORE_RE = re.compile(
    _CUE_LEAD
    + rf"(?P<name>{_ANY_SURNAME_RE}{_GIVEN}{{1,2}}|[小老阿]{SURNAME_RE}(?![{_CJK}])"
    # 我是小V, 患者小K: a nickname of 小 and one Latin letter
    + r"|小[A-Z](?![A-Za-z0-9]))"
)
# A name in Latin letters after the same cues (我叫Lily, 患者：Tom Smith): a capital and at
# least two lower-case letters, so abbreviations (HBV, Rh) never count; an honorific before
# and degrees after it are part of it (我叫Dr. Tom Smith PhD).
_LATIN_BEFORE_RE = re.compile(
    _CUE_LEAD
    + rf"(?P<name>{HONORIFIC}?[A-Z][a-z]{{2,15}}(?:[ ·.\-][A-Z][a-z]{{1,15}}){{0,2}}{NAME_TAIL})"
    + r"(?![A-Za-z])"
)
# Where a pinyin name or initials may follow (``latin_names.pinyin_name_at``): self-naming
# cues and the patient's label, not kinship words (我妈ALT高).
_PINYIN_AFTER_CUE_RE = re.compile(
    r"(?:我叫|我是|名叫|叫做|姓名|患者|病人|本人|就诊人|患者姓名|病人姓名|名字是|名字叫)"
    r"\s*[:：]?\s*(?=[A-Za-z])"
)
# On someone's behalf (替夏一德咨询, 帮王芳挂号): the person asked about is named.
_ON_BEHALF_RE = re.compile(
    rf"(?:替|帮|给)(?P<name>{SURNAME_RE}{_GIVEN}{{1,2}}?)"
    "(?=咨询|问一?下|问问|挂号|预约|开药|买药|拿药|看一?下|问)"
)
# A longer name with no surname from the list (乌云其木格, 才让卓玛: Mongolian and Tibetan
# names are written without a dot) right after a person cue and before a clause break.
_LONG_AFTER_CUE_RE = re.compile(_CUE_LEAD + rf"(?P<name>[{_CJK}]{{4,6}})(?=[，,。；;\s]|$)")
# A lookahead so every start is tried: in 谢谢张主任 the match at 谢 must not hide the one at 张.
_AFTER_RE = re.compile(
    starts_with_one_of("|".join(COMPOUND_SURNAMES), "|".join(SINGLE_SURNAMES))
    + rf"(?=(?P<name>{SURNAME_RE}{_GIVEN}{{0,2}}?)(?:{AFTER_TITLES}))"
)
# A full name before a kinship word used to address or speak of a friend or a star (池洋姐姐,
# 柏思远哥哥): the word is no title of its own, so a surname alone before it (王姐姐) is not
# taken, and the given part holds none of its characters.
_KIN_ADDRESS = "姐姐|哥哥|妹妹|弟弟|大姐|大哥|姐|哥"
_KIN_AFTER_RE = re.compile(
    starts_with_one_of("|".join(COMPOUND_SURNAMES), "|".join(SINGLE_SURNAMES))
    + rf"(?=(?P<name>{SURNAME_RE}(?:(?![姐哥妹弟]){_GIVEN}){{1,2}}?)(?:{_KIN_ADDRESS}))"
)
_KIN_GATE = re.compile("[姐哥妹弟]")
# Gates: what every match of the patterns after them holds (a cue word, a title, a nickname's
# first character, a doubled character), found by one fast scan (``recognizer.gated``).
_CUE_GATE = re.compile(BEFORE_CUES)
_TITLE_GATE = re.compile(AFTER_TITLES)
_NICK_GATE = re.compile("[小老阿]")
DOUBLED_GATE = re.compile(rf"([{_CJK}])\1")
# Compound surnames that are no ordinary word (上官, 端木; not 东方, 百里, 单于, 长孙, nor
# 公孙 of 外公孙子): one followed by a given name is a name wherever it stands, unless its
# second character starts a word with the next (三点钟离开, 司马上, 上官网).
_NAME_ONLY_COMPOUNDS = tuple(
    c
    for c in COMPOUND_SURNAMES
    if c not in words("东方 百里 第五 单于 独孤 西门 南宫 长孙 濮阳 司空 微生 公孙")
)
_NOT_AFTER_COMPOUND = frozenset(words("官网"))  # a word jieba's dictionary lacks
_COMPOUND_RE = re.compile(
    starts_with_one_of("|".join(_NAME_ONLY_COMPOUNDS))
    + rf"(?P<name>(?:{'|'.join(_NAME_ONLY_COMPOUNDS)})(?:(?!{AFTER_TITLES}){_GIVEN}){{1,2}})"
)
# A surname and a given name greeted where a clause starts (东方昊宇您好, 呼强你好): the
# greeting says person, as a title does, for any surname, a rarer or word-like one too.
_GREETING = "您好|你好"
_GREETED_RE = re.compile(
    r"(?:^|(?<=[，。！？、；：,.!?;:\s]))"
    + f"(?P<name>{_ANY_SURNAME_RE}"
    + rf"(?:(?!{AFTER_TITLES}|{_GREETING}){_GIVEN}){{1,2}})"
    + f"(?={_GREETING})"
)
_GREETING_GATE = re.compile(_GREETING)
# Frames that leave a name no other reading, though it is an ordinary word (平安, 文静): a
# clause of its own after 我叫, or the person whose relative is speaking (我是…的家属).
_WORD_NAME = f"(?P<name>{_ANY_SURNAME_RE}{_GIVEN}{{1,2}}?)"
_WORD_NAME_RES = (
    re.compile(f"(?:我叫|名叫){_WORD_NAME}(?=[，,。；;！!？?\\s]|$)"),
    re.compile(
        f"我是{_WORD_NAME}的(?:家属|家人|亲属|爱人|妻子|丈夫|老公|老婆|女儿|儿子|父亲|母亲|妈妈|爸爸)"
    ),
)
_WORD_NAME_GATE = re.compile("我叫|名叫|我是")
# What a name never is, whatever frames it: a time, a pronoun, a number or a function word.
_NEVER_NAME_TAGS = frozenset(words("t r m q d p c u f y e o"))
# Words that end right before a name or would be read as its start: 谢谢张主任, 感谢李医生.
_LEAD_INS = frozenset(words("谢谢 感谢 多谢 致谢 麻烦 辛苦 问问 请问 找找 上午 下午 晚上"))


_LOCK = threading.Lock()


def _jieba() -> object:
    with _LOCK:  # image masking calls the text recognizers from worker threads
        return _load_jieba()


@cache
def _load_jieba() -> object:
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba.posseg


@cache
def _word_tags() -> dict[str, str]:
    return _jieba().dt.word_tag_tab  # type: ignore[attr-defined]


def _common(tag: str | None) -> bool:
    return tag is not None and not tag.startswith("nr")


def word_tag(word: str) -> str | None:
    """jieba's part-of-speech tag for a dictionary word, None for an unknown one."""
    return _word_tags().get(word)


def word_count(word: str) -> int:
    """How often jieba's dictionary counts ``word`` (0 for an unknown one): what tells an
    everyday word (公司 45604, 朋友 9200) from a rare one a given name may be (海波 28)."""
    return int(_jieba().dt.FREQ.get(word, 0) or 0)  # type: ignore[attr-defined]


_CUT_AHEAD = 6  # characters after a boundary that jieba's cut needs to read the next word


def cut_between(text: str, start: int, end: int) -> bool:
    """Whether jieba cuts ``text[start:]`` (a few characters past ``end``) at ``end``: a
    word starts there (韩人意|好恐怖), not inside one running across it (王人|平时)."""
    offset = start
    for piece in _segmenter().cut(text[start : end + _CUT_AHEAD]):  # type: ignore[attr-defined]
        offset += len(piece)
        if offset >= end:
            return offset == end
    return True


# Herbs, drugs, brands and diseases that begin with a surname character and that jieba's
# dictionary tags as person names (杨梅/nr, 何首乌/nr, 金银花/nr): clinical words, never names.
CLINICAL_LEXICON = frozenset(
    words(
        "杨梅 杨梅舌 王老吉 马应龙 葛根 龙胆 何首乌 牛黄 金银花 黄连 黄连素 黄芪 黄芩 黄柏 黄精 "
        "当归 白术 白芍 白芷 白及 白果 柴胡 连翘 杜仲 党参 丁香 丁桂儿 桂枝 陈皮 甘草 石膏 石榴 "
        "石决明 石淋 龙骨 龙眼 马齿苋 马兜铃 牛膝 牛蒡 钟乳石 薄荷 丹参 丹皮 苏叶 苏子 杏仁 桑叶 "
        "桑葚 藿香 高良姜 干姜 秦艽 防风 羌活 独活 安宫 雷公藤 车前子 车前草 谷芽 麦芽 麦冬 沙参 "
        "贝母 川贝 夏枯草 罗汉果 余甘子 郁金 芦荟 艾叶 艾草 花椒 白癜风 白内障 白血病"
    )
)


def is_common_word(word: str) -> bool:
    if word in CLINICAL_LEXICON:
        return True
    tag = _word_tags().get(word)
    return tag is not None and not tag.startswith("nr")


# Dictionary tags for abbreviations (j) and set phrases (l). A star's short name (a
# transliteration cut to two characters) or a fictional character's epithet is listed so:
# the NER's person over such a word is that person, where over a plain noun it is the noun.
_SHORTHAND_TAGS = frozenset({"j", "l"})


def shorthand_person(word: str) -> bool:
    """A two-to-four Han character dictionary abbreviation or set phrase with no clinical
    character: what the NER's person may be kept over though the dictionary knows it."""
    return (
        2 <= len(word) <= 4
        and _CJK_WORD.fullmatch(word) is not None
        and _word_tags().get(word) in _SHORTHAND_TAGS
        and word not in CLINICAL_LEXICON
        and not any(c in _CLINICAL_CHARS or c in _CARE_SHORTHAND for c in word)
    )


# Characters of clinical abbreviations (彩超, 镜检, 医改, 护理): never a person's short name.
_CARE_SHORTHAND = frozenset("超检诊疗医护")


def trim_name(candidate: str) -> str:
    """Drop trailing characters that are never part of a given name (我叫张伟今年…)."""
    if len(candidate) == 2 and candidate[0] in "小老阿":
        return candidate  # 小周: a nickname's second character is a surname, never trimmed
    surname_len = 2 if candidate[:2] in COMPOUND_SURNAMES else 1
    end = len(candidate)
    for i in range(surname_len, len(candidate)):
        if candidate[i] in NAME_STOP:
            end = i
            break
    return candidate[:end]


def plausible_name(
    text: str,
    start: int,
    end: int,
    *,
    allow_surname_only: bool = False,
    after_cue: bool = False,
    inner_stops: frozenset[str] = frozenset(),
) -> bool:
    """``after_cue``: a cue (老公, 交款人：) ends right before ``start``, so a dictionary word
    across that boundary (老公|房 as 公房) is no evidence against the name. ``inner_stops``:
    name-ending characters the caller's evidence allows inside the given name (柯天池)."""
    name = text[start:end]
    if clinical_term_shaped(text, start, end):
        return False
    if not after_cue and used_like_a_drug(text, start, end):
        return False
    if start > 0 and text[start - 1] in _COUNTING and name[0] in _MEASURE_SURNAMES:
        return False  # 这张图, 两条: a measure word, not 张 or 条
    surname_len = 2 if name[:2] in COMPOUND_SURNAMES else 1
    if len(name) < surname_len + (0 if allow_surname_only else 1):
        return False
    if after_cue and len(name) == 2 and name[0] in "小老阿":
        # A nickname right after a form label or 我叫 (我是小周, 交款人：小于): only a number
        # after it (小于3岁) says it is a word; its second character may be any surname.
        return not text[end : end + 1].isdigit()
    given = name[surname_len:]
    if not_a_given_name(given, stops=False) or any(
        c in NAME_STOP and c not in inner_stops for c in given
    ):
        return False
    if name.startswith(NOT_NAME_STARTS):
        return False
    if name[surname_len:] in _KINSHIP_GIVEN:
        return False  # 厚林|兄弟 read as 林 + 兄弟: a kinship word is no given name
    if len(name) == 3 and name[1] == name[2] and name[0] in ADJECTIVE_SURNAMES:
        return False  # 金灿灿, 黄澄澄: a colour or texture word doubled, not a given name
    if name[:1] * 2 == name[:2] and _doubled_han(text, start + 2):
        return False  # 林林总总: a word doubled pair by pair
    if start > 0 and text[start - 1] == name[0] and _doubled_han(text, end):
        return False  # 林林|总总 read as 林 + the title 总
    if _BLOOD_TYPE_AFTER.match(text, end):
        return False  # 熊猫血, 稀有血: a blood type, said of oneself as 我是…
    if _word_tags().get(name) == "t":
        return False  # 元旦, 春节: a time word is the whole candidate, not a part of it
    # The surname must not end a word that starts before it (谢谢医生, 两周).
    if not after_cue and start > 0 and is_common_word(text[start - 1 : start + 1]):
        return False
    # Nor start an ordinary word (高热, 高血压) or be one. Place-name and time words inside a
    # name (马国庆 holds 马国/ns and 国庆/t) are no evidence against it.
    for n in (2, 3, 4):
        if text[start : start + n] in CLINICAL_LEXICON:
            return False
        if n == surname_len:
            continue  # 上官/n is the surname itself
        tag = _word_tags().get(text[start : start + n])
        if tag is not None and not tag.startswith("nr") and tag not in _NAME_SAFE_TAGS:
            return False
    return True


_NAME_SAFE_TAGS = frozenset({"ns", "nz", "nt", "t", "r"})
_KINSHIP_GIVEN = frozenset(words("兄弟 姐妹 兄妹 姐弟 哥们 弟兄 哥哥 姐姐 弟弟 妹妹 叔叔 阿姨"))


def _doubled_han(text: str, i: int) -> bool:
    """A Han character doubled at ``i`` (总总), not two spaces or digits."""
    pair = text[i : i + 2]
    return len(pair) == 2 and pair[0] == pair[1] and "\u4e00" <= pair[0] <= "\u9fff"


# Surname characters that are also colour and texture adjectives, which double into ABB
# words (金灿灿, 黄澄澄, 蓝盈盈) shaped like a surname and a doubled given name.
ADJECTIVE_SURNAMES = frozenset("金黄蓝白红绿黑灰紫亮暖热冷湿干胖瘦香甜酸辣软硬圆毛乐")
# Characters no given name holds: body fluids and lesions (熊猫血, 王尿), so a surname before
# them heads a clinical word.
_CLINICAL_CHARS = frozenset("血尿便痰脓疮疹癌瘤病症炎痛痒药")
# A one-character given name that is a body part makes a side or a place of the body (左耳,
# 右眼, 上肢), not a person.
_BODY_PARTS = frozenset("耳眼鼻嘴唇舌牙齿手脚足腿腰背胸腹肚头颈肩臂肘膝踝腕指趾肺肝胃肠肾脾胆脑肢")
# Phonetic-transliteration syllables of drug and brand names (杜密克, 司美格鲁肽, 诺和灵):
# a given part made of these alone is a transliteration, not a Chinese given name.
_TRANSLITERATION = frozenset("密克斯普诺芬罗肽唑酮汀替坦氯胺醇嗪啶特洛拉莫鲁格舒达仑奈泊曲氟")
# Dialect pronouns (俺, 咱, 侬, 伊, 佢) and insurance words (医保, 新农合, 商保) start no name,
# though some of their characters are surnames.
NOT_NAME_STARTS = tuple(words("俺 咱 侬 伊讲 伊说 伊个 佢 医保 农合 新农合 商保 社保 保险"))


_BLOOD_TYPE_AFTER = re.compile(r"血(?:型|[，,。；;！!？?\s]|$)")


def not_a_given_name(given: str, *, stops: bool = True) -> bool:
    """Whether ``given`` (a candidate's part after its surname) holds a character no given
    name uses, is a single body part, or is a transliteration of a drug or brand.

    ``stops``: also the characters that end a name in running text (天, 人, 时 …), which the
    rules use to find a name's end; a model's whole span (吴天昊, 韩佳人) keeps them."""
    if any(c in _CLINICAL_CHARS or (stops and c in NAME_STOP) for c in given):
        return True
    if len(given) == 1 and given in _BODY_PARTS:
        return True
    return len(given) >= 2 and all(c in _TRANSLITERATION for c in given)


# Relative-time words that follow a name in a sentence and begin with a character given
# names hardly end with (张伟|昨天, 李明|早上): a three-character candidate that took that
# character gives it back, so the relative date stays whole. 明天 and 刚才 are not here:
# 晓明, 王刚 end names.
_TIME_AFTER_NAME = frozenset(words("昨天 昨晚 昨日 今天 今早 今晚 今日 今年 前天 早上 早晨 晚上"))


def before_time_word(text: str, start: int, end: int) -> int:
    """``end``, or one less where the candidate's last character starts a relative-time word
    and two characters are left."""
    if end - start >= 3 and text[end - 1 : end + 1] in _TIME_AFTER_NAME:
        return end - 1
    return end


_COUNTING = set("这那哪每几一二两三四五六七八九十半")
_MEASURE_SURNAMES = set("张条片位次支根块份种")


def name_span(text: str, start: int, end: int, source: str) -> Span:
    """A NAME span over ``text[start:end]``: the one constructor the name recognizers share."""
    return Span(start=start, end=end, type=EntityType.NAME, text=text[start:end], source=source)


@dataclass
class ContextNameRecognizer:
    """Names introduced by a cue (我叫…, 患者…, 姓名：…) or followed by a title (…医生)."""

    name: str = "name_context"

    def find(self, text: str) -> Iterator[Span]:
        for match in gated(_CUE_GATE, _BEFORE_RE, text):
            start = match.start("name")
            end = before_time_word(text, start, start + len(trim_name(match.group("name"))))
            rare = text[start] in RARE_SURNAMES and text[start : start + 2] not in COMPOUND_SURNAMES
            if rare and word_tag(text[start : start + 2]) is not None:
                continue  # 元旦, 强烈: a rarer surname heading any dictionary word is that word
            field = _NEXT_FIELD_RE.search(text, start + 1, end + 3)
            if field and field.start() < end:
                end = field.start()  # 姓名:张三性别:男 -- the next label ends the name
            if plausible_name(text, start, end, after_cue=True):
                yield name_span(text, start, end, self.name)
        for match in _ON_BEHALF_RE.finditer(text):
            start, end = match.span("name")
            if plausible_name(text, start, end, after_cue=True):
                yield name_span(text, start, end, self.name)
        for match in gated(_CUE_GATE, _LONG_AFTER_CUE_RE, text):
            start, end = match.span("name")
            if _unlisted_long_name(text, start, end):
                yield name_span(text, start, end, self.name)
        for match in gated(_CUE_GATE, _LATIN_BEFORE_RE, text):
            start, end = match.span("name")
            if not clinical_term_shaped(text, start, end):  # 患者Down综合征: an eponym
                name = text[start:end]
                yield Span(start=start, end=end, type=EntityType.NAME, text=name, source=self.name)
        for match in gated(_CUE_GATE, _PINYIN_AFTER_CUE_RE, text):
            end = pinyin_name_at(text, match.end())
            if end is not None:
                start = match.end()
                yield Span(
                    start=start,
                    end=end,
                    type=EntityType.NAME,
                    text=text[start:end],
                    source=self.name,
                )
        for match in _LABEL_RE.finditer(text):
            start, end = match.span("name")
            value = match.group("name")
            blank = value[0] in _BLANK_VALUE  # 未填, 不详, 无: an empty field
            if not blank and value[0] not in NAME_STOP and not is_common_word(value):
                yield Span(start=start, end=end, type=EntityType.NAME, text=value, source=self.name)
        for match in _COMPOUND_RE.finditer(text):
            start = match.start("name")
            joint = text[start + 1 : start + 3]
            if is_common_word(joint) or joint in _NOT_AFTER_COMPOUND:
                continue
            end = before_time_word(text, start, start + len(trim_name(match.group("name"))))
            if plausible_name(text, start, end):
                name = text[start:end]
                yield Span(start=start, end=end, type=EntityType.NAME, text=name, source=self.name)
        for match in gated(_GREETING_GATE, _GREETED_RE, text):
            start, end = match.span("name")
            if _greeted_name(text, start, end):
                yield name_span(text, start, end, self.name)
        if _WORD_NAME_GATE.search(text):
            for match in (m for p in _WORD_NAME_RES for m in p.finditer(text)):
                if _framed_word_name(text, *match.span("name")):
                    yield name_span(text, *match.span("name"), self.name)
        best: dict[int, tuple[int, int]] = {}  # title position -> longest plausible name
        for match in gated(_TITLE_GATE, _AFTER_RE, text):
            start, end = match.span("name")
            if end in best or _after_lead_in(text, start) or _conjunction_before(text, start, end):
                continue
            if plausible_name(text, start, end, allow_surname_only=True):
                best[end] = (start, end)
        for match in gated(_KIN_GATE, _KIN_AFTER_RE, text):
            start, end = match.span("name")
            if end in best or _after_lead_in(text, start) or _conjunction_before(text, start, end):
                continue
            if plausible_name(text, start, end):
                best[end] = (start, end)
        for start, end in best.values():
            yield name_span(text, start, end, self.name)


def _framed_word_name(text: str, start: int, end: int) -> bool:
    """A name in a frame of ``_WORD_NAME_RES``: any dictionary word but a time, a pronoun, a
    number or a function word, and nothing clinical."""
    name = text[start:end]
    if any(c in NAME_STOP for c in name[1:]) or name in CLINICAL_LEXICON:
        return False
    if word_tag(name) in _NEVER_NAME_TAGS or not_a_given_name(name[1:], stops=False):
        return False
    return not clinical_term_shaped(text, start, end)


def _greeted_name(text: str, start: int, end: int) -> bool:
    """A greeted candidate is a name unless a dictionary word other than the compound surname
    heads it: a place, a time or any word greeted (南京你好, 明天你好, 高三你好; the
    dictionary's person tag is no evidence here, and the names it knows the tagger finds)."""
    name = text[start:end]
    surname_len = 2 if name[:2] in COMPOUND_SURNAMES else 1
    if any(n != surname_len and name[:n] in _word_tags() for n in range(2, len(name) + 1)):
        return False
    return plausible_name(text, start, end, after_cue=True)


def _unlisted_long_name(text: str, start: int, end: int) -> bool:
    """A four-to-six character run after a cue is a name when nothing in it reads as Chinese
    words: no function or clinical character, no dictionary word other than a name or place
    part at its start, and no drug or disease shape."""
    name = text[start:end]
    if not_a_given_name(name) or name.startswith(NOT_NAME_STARTS) or name in CLINICAL_LEXICON:
        return False
    if clinical_term_shaped(text, start, end):
        return False
    whole = _word_tags().get(name)
    if whole is not None and not whole.startswith("nr") and whole not in _NAME_SAFE_TAGS:
        return False
    for i in range(len(name) - 1):
        tag = _word_tags().get(name[i : i + 2])
        if tag is None or tag.startswith("nr") or tag in _NAME_SAFE_TAGS:
            continue
        if i == 0 or tag in _FUNCTION_TAGS:
            return False  # 男性患者, 也是这样: words, not a transliterated name
    return True


def _conjunction_before(text: str, start: int, end: int) -> bool:
    """和|王医生, 向|李主任: a surname that is a preposition or conjunction (和, 向, 于) before
    a title or another surname is that word, and any name starts one later (柏林医生 stays)."""
    if text[start] not in _CONJUNCTION_SURNAMES:
        return False
    second = text[start + 1 : start + 2]
    return end - start == 1 or (second in SINGLE_SURNAMES and second not in AMBIGUOUS_SURNAMES)


_CONJUNCTION_SURNAMES = frozenset("和向于与同")


def _after_lead_in(text: str, start: int) -> bool:
    return text[max(0, start - 1) : start + 1] in _LEAD_INS or text[start : start + 2] in _LEAD_INS


# Surnames that are far more often function words or word parts (和, 于, 向, 时, 全 …): only
# a context cue, never the tagger alone, makes them a name.
WORDLIKE_SURNAMES = frozenset(
    "和于向常时明全应师安成关单路解查车项连农宗管盛曲游甘祝包宁尚符舒纪凌毕季戚景党宫费冷席卫"
    "米边仇商沙荣巫寇桑郎仲敖池麻迟万文易古谷柏司戴白艾麦毛康"
)
AMBIGUOUS_SURNAMES = WORDLIKE_SURNAMES | frozenset(_RARE_ONLY)
_NUMERAL_START = frozenset("一二三四五六七八九十百千万两零")
_BREAK_RE = re.compile(r"[，。！？；、,.!?;\s\n]")
# Surname characters worth a segmenter window: the ambiguous ones (和, 时, 全 …, among the
# commonest characters) are left out of the class rather than skipped after each match. A
# compound surname holding one (单于) still matches whole, and a one-character match consumes
# nothing more, so the other matches are the same.
_NAME_LEADING = "".join(c for c in SINGLE_SURNAMES if c not in AMBIGUOUS_SURNAMES)
_SURNAME_CHAR_RE = re.compile(
    starts_with_one_of("|".join(COMPOUND_SURNAMES), "|".join(_NAME_LEADING))
    + f"(?:{'|'.join(COMPOUND_SURNAMES)}|[{_NAME_LEADING}])"
)
_CJK_CHAR = re.compile(f"[{_CJK}]")
WINDOW_BEFORE, WINDOW_AFTER = 2, 5


def candidate_windows(text: str) -> tuple[list[tuple[int, int]], set[int]]:
    """Short windows around surname characters that start no ordinary word, and the
    positions of those surnames.

    Tagging a few characters around each candidate instead of whole clauses keeps the
    segmenter off most of the text.
    """
    windows: list[tuple[int, int]] = []
    starts: set[int] = set()
    tags = _word_tags()
    for match in _SURNAME_CHAR_RE.finditer(text):
        i = match.start()
        if i + 1 >= len(text) or not _CJK_CHAR.match(text[i + 1]) or text[i + 1] in _NUMERAL_START:
            continue
        if i > 0 and (text[i - 1].isdigit() or text[i - 1] in _NUMERAL_START):
            continue  # 2周, 两周: a duration, not 周
        if i > 0 and _common(tags.get(text[i - 1 : i + 1])):
            continue
        if (
            _common(tags.get(text[i : i + 2]))
            or _common(tags.get(text[i : i + 3]))
            or _common(tags.get(text[i : i + 4]))
        ):
            continue
        starts.add(i)
        lo, hi = max(0, i - WINDOW_BEFORE), min(len(text), i + WINDOW_AFTER)
        left = _BREAK_RE.search(text[lo:i][::-1])
        if left:
            lo = i - left.start()
        right = _BREAK_RE.search(text, i, hi)
        if right:
            hi = right.start()
        if windows and lo <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(hi, windows[-1][1]))
        else:
            windows.append((lo, hi))
    return windows, starts


@dataclass
class JiebaNameRecognizer:
    """jieba's segmentation and POS dictionary: a lone surname followed by a word the
    dictionary tags as a name part (朱 + 秀英/nr, 王 + 桂兰/ns), or an unknown word its HMM
    found that starts with a surname (张伟). Only at surname positions that passed the
    cheap gate, and only after a known word (inside an unknown word, such as a drug name,
    a surname character is just a syllable)."""

    name: str = "name_jieba_nr"

    def find(self, text: str) -> Iterator[Span]:
        jieba = _segmenter()
        tags = _word_tags()
        windows, starts = candidate_windows(text)
        for lo, hi in windows:
            pieces = list(jieba.cut(text[lo:hi]))  # type: ignore[attr-defined]
            cursor = lo
            previous: str | None = None
            for index, word in enumerate(pieces):
                start = cursor
                cursor += len(word)
                before, previous = previous, word
                if start not in starts:
                    continue
                unknown_before = before is not None and before not in tags
                if unknown_before and not _full_name_after(before, word, tags):
                    continue  # inside an unknown word, a surname is a syllable (坦索|罗辛促)
                end: int | None = None
                if _is_surname(word) and index + 1 < len(pieces):
                    nxt = pieces[index + 1]
                    if _given_like(nxt, tags.get(nxt)):
                        end = before_time_word(text, start, cursor + len(nxt))
                elif _whole_name(word, tags):
                    end = cursor
                if end is not None and plausible_name(text, start, end):
                    yield name_span(text, start, end, self.name)


_CJK_WORD = re.compile(f"[{_CJK}]+")
_FUNCTION_TAGS = frozenset(
    {
        "v",
        "vn",
        "vd",
        "d",
        "ad",
        "p",
        "c",
        "u",
        "uj",
        "ul",
        "m",
        "q",
        "mq",
        "f",
        "r",
        "y",
        "e",
        "o",
        "zg",
    }
)
_NAME_PART_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nz", "t"})


def _full_name_after(before: str, word: str, tags: dict[str, str]) -> bool:
    """A three-character word the segmenter cut as a whole after an unknown word of three or
    more characters (思密达|曾若彤): a surname and a two-character given name are a name there
    too. After a two-character unknown word it is usually a drug's syllables (坦索|罗辛促)."""
    if len(before) < 3 or len(word) != 3 or word[0] not in SINGLE_SURNAMES:
        return False
    return _whole_name(word, tags)


def _whole_name(word: str, tags: dict[str, str]) -> bool:
    if not 2 <= len(word) <= 3 or not SURNAME.match(word) or not _CJK_WORD.fullmatch(word):
        return False
    if len(word) == 3 and word[1] == "老":
        return False  # 王老吉, 张老汉: a brand or a form of address, not a given name
    tag = tags.get(word)
    if tag is not None:
        return tag.startswith("nr")
    return _given_like(word[1:], tags.get(word[1:]))


def _given_like(word: str, tag: str | None) -> bool:
    if not 1 <= len(word) <= 2 or not _CJK_WORD.fullmatch(word):
        return False
    if any(c in NAME_STOP for c in word):
        return False
    if len(word) == 2:
        return tag is None or tag in _NAME_PART_TAGS
    return tag is None or tag not in _FUNCTION_TAGS


@cache
def _segmenter() -> object:
    _jieba()
    import jieba

    return jieba


def segment(text: str) -> list[str]:
    """jieba's words of ``text``, its dictionary only (no HMM guesses)."""
    return _segmenter().lcut(text, HMM=False)  # type: ignore[attr-defined]


def _is_surname(word: str) -> bool:
    return word in COMPOUND_SURNAMES or (len(word) == 1 and word in SINGLE_SURNAMES)


# -- names no surname list covers ---------------------------------------------------------
# Every middle dot a keyboard or a converter writes: U+00B7, bullet, katakana and half-width
# katakana dots, the hyphenation point, bullet and dot operators, the full-width full stop.
_DOTS = "·•・．‧∙⋅･"
# Transliterated (Uyghur, Kazakh, Tibetan …) names join their parts with a middle dot; only
# these end a part, since such names hold characters (都, 不) that end ordinary Chinese names.
_DOTTED_STOP = set("说问让叫给帮找的了是在和与也还我你他她吗呢吧啊，。！？、；：,.!?;: \t\n")
# Relative-time words that may follow a name with no space (阿依古丽·买买提昨天开始…).
RELATIVE_TIME = re.compile(
    "(?:大前天|前天|昨天|昨晚|昨日|今天|今早|今晚|今日|今年|去年|前年|明天|后天|早上|早晨|晚上|"
    "上午|下午|中午|刚才|上个?月|上周|上礼拜|这两天|这几天|最近|一直|平时)"
)
# Syllables of transliterated Uyghur, Kazakh and Tibetan names (阿不都热合曼, 库尔班): two of
# them in a row are a name's syllables even where they spell a Chinese word (热合).
_TRANSLITERATED_NAME = frozenset(
    "阿不都热合曼力孜提买古丽依尔艾库班江汗尼克吾米娜玛拉吐洪努兰别克迪夏木图孙扎西卓才让巴特"
    "买买祖皮亚热依其格乌云吉日"
)
_DOTTED_RE = re.compile(f"[{_CJK}]+(?:[{_DOTS}.][{_CJK}]+)+")
_DOT_SPLIT = re.compile(f"([{_DOTS}.])")  # parts at even indexes, the dots between at odd
# Syllables of the standard transliteration of foreign names (比尔, 盖茨, 玛丽, 安娜): with a
# plain full stop between them (half-width text turns ． into .), a name is only a run of
# these, since a full stop also ends a sentence (打死你.打死你).
_FOREIGN_SYLLABLES = _TRANSLITERATED_NAME | frozenset(
    "阿埃艾爱安奥巴保贝本比彼宾波伯布查达戴丹道德迪蒂丁杜多厄恩法菲费芬丰弗福盖冈戈格哥古哈"
    "海汉豪赫亨胡华霍基吉加贾杰金卡凯坎康科克肯库拉莱兰劳勒雷里利莉林琳卢鲁路伦罗洛马玛迈麦"
    "曼梅门蒙米密明莫姆穆纳娜内尼妮努诺欧帕佩彭皮普奇乔切琼萨塞桑瑟森沙尚舍圣施史斯索塔泰汤"
    "唐特提汀图托瓦万威韦维温沃乌西希谢辛休雅亚扬耶伊因英尤约泽扎詹朱兹茨尔丽莎琼"
)


_LEFT_CUES = sorted(
    set(BEFORE_CUES.split("|"))
    | set(AFTER_TITLES.split("|"))
    | set(words("谢谢 感谢 多谢 你好 您好 转告 告诉 麻烦 回复 问问 通知 请 叫 是 给 和 跟 找")),
    key=len,
    reverse=True,
)


# The cues by length: whether one ends at a position is one set lookup per length.
_LEFT_CUES_BY_LENGTH = [
    (n, frozenset(c for c in _LEFT_CUES if len(c) == n))
    for n in sorted({len(c) for c in _LEFT_CUES})
]


def _cue_ends_at(text: str, j: int) -> bool:
    return any(n <= j and text[j - n : j] in cues for n, cues in _LEFT_CUES_BY_LENGTH)


def _left_start(text: str, dot: int) -> int:
    """Where the name before the first dot begins: scanning left, a cue or kinship word
    (我是, 他爸, 谢谢, 转告) or a function character ends it."""
    j = dot
    while j > 0 and dot - j < 8 and "\u4e00" <= text[j - 1] <= "\u9fff":
        if text[j - 1] in _DOTTED_STOP or _cue_ends_at(text, j):
            break
        j -= 1
    return j


_TITLE_RE = re.compile(f"(?:{AFTER_TITLES})")


def _foreign_name(span: str) -> bool:
    """Parts joined by a plain full stop that are all transliteration syllables and none an
    ordinary word or a medicine (阿莫西林.布洛芬)."""
    parts = [p for p in _DOT_SPLIT.split(span)[::2] if p]
    if any(is_common_word(p) or clinical_term_shaped(p, 0, len(p)) for p in parts):
        return False
    return all(c in _FOREIGN_SYLLABLES for p in parts for c in p)


def transliterated(word: str) -> bool:
    """Every character of ``word`` is a syllable used to write foreign names (萨莫尼卡)."""
    return bool(word) and all(c in _FOREIGN_SYLLABLES for c in word)


@dataclass
class DottedNameRecognizer:
    """Han runs joined by a middle dot (古丽娜尔·吐尔洪): a transliterated personal name."""

    name: str = "name_dotted"

    def find(self, text: str) -> Iterator[Span]:
        if not any(dot in text for dot in _DOTS + "."):
            return
        for match in _DOTTED_RE.finditer(text):
            parts = _DOT_SPLIT.split(match.group(0))
            dot = match.start() + len(parts[0])
            start = _left_start(text, dot)
            last = parts[-1]
            cut = len(last)
            title = _TITLE_RE.search(last)
            if title:
                cut = title.start()
            for i, ch in enumerate(last[:cut]):
                pair = last[i : i + 2]
                syllables = all(c in _TRANSLITERATED_NAME for c in pair)
                if ch in _DOTTED_STOP or (i >= 3 and not syllables and is_common_word(pair)):
                    cut = i  # 努尔兰|咨询: an ordinary word after the name ends it
                    break
                if i >= 2 and RELATIVE_TIME.match(last, i):
                    cut = i  # 阿不力孜|大前天
                    break
            cut = min(cut, 7)  # 阿不都热合曼: a transliterated part runs to six or seven
            if start == dot or cut < 1:
                continue
            end = match.end() - (len(last) - cut)
            if "." in parts[1::2] and not _foreign_name(text[start:end]):
                continue  # 打死你.打死你, 阿莫西林.布洛芬: sentences or a list, not a name
            yield name_span(text, start, end, self.name)


# A handle after @ runs to the next space or punctuation: in chat it is a person's account,
# masked as an account identifier (ID), like a WeChat or QQ number. Not an e-mail's @.
_HANDLE_RE = re.compile(
    rf"@(?P<name>[{_CJK}{_DOTS}A-Za-z0-9_\-丶]{{2,20}})(?![A-Za-z0-9_\-]*\.[A-Za-z])"
)
_EMAIL_LOCAL_END = re.compile(r"[A-Za-z0-9._%+\-]$")
# Weibo chains handles with no space (@王小明@dr_li2@陈某): an @ right after another handle's
# last letter starts a handle, not an e-mail's host.
_CHAINED_RE = re.compile(r"@[^\s@，。:：]{1,30}$")


def _handle_starts(text: str, at: int) -> bool:
    """Whether the @ at ``at`` opens a handle: nothing of an e-mail's local part before it,
    or the end of another handle."""
    before = text[max(0, at - 31) : at]
    return not _EMAIL_LOCAL_END.search(before) or _CHAINED_RE.search(before) is not None


# 小X / 老X / 阿X at a clause start or after a greeting or cue, when the dictionary does not
# know the pair as an ordinary word (小时, 老师, 阿姨).
_NICK_NEXT = "说问来去的也你您让叫给帮跟和要就还都又在是，。！？,.!?"
_NICK = rf"(?P<name>[小老阿][{_CJK}])(?=[{_NICK_NEXT}\s]|$)"
_NICK_RE = re.compile(
    r"(?:^|(?<=[，。！？、；：,.!?;:\s@叫和跟])|(?<=你好|您好|谢谢|感谢|转告|告诉|问问))" + _NICK
)
# …and right after the word for someone close (我女朋友小雪, 我同事老周说): there a dictionary
# word (小雪 the solar term) is still the nickname, since only an ending follows it.
_NICK_AFTER_CLOSE_RE = re.compile(
    r"(?:(?<=老公|老婆|爱人|女儿|儿子|朋友|同事|邻居|室友|同学|闺蜜)|(?<=女朋友|男朋友))" + _NICK
)
_NOT_GIVEN = set("人们家里外边面孩子腿肠便时候心数量样些点会儿师公婆板年姨妈爸哥姐弟妹")
# A child's doubled pet name right after the word for the child (女儿乐乐, 宝宝朵朵, 孩子叫豆豆):
# a doubled character there names the child, unless it is a relative or an adverb.
_DOUBLED_RE = re.compile(
    r"(?:(?:我家|咱家|俺家)(?:宝宝|宝贝|孩子|小孩|儿子|女儿|闺女)?"
    r"|儿子|女儿|闺女|宝宝|宝贝|孩子|小孩|孙子|孙女|外孙女?|侄子|侄女|外甥女?)"
    r"(?:叫|是|名叫|小名叫?|小名是)?[:：\s]?"
    rf"(?P<name>(?P<c>[{_CJK}])(?P=c))(?!(?P=c))"
)
# A doubled pet name anywhere a person stands: after 和, 跟, 叫, 让, @ or a clause start, and
# before what is said of a person (解解说, 壮壮很幸福, 看看乐乐的照片 is not: 看看 is a word).
_DOUBLED_ANYWHERE_RE = re.compile(
    rf"(?:^|(?<=[，。！？、；：:,.!?;\s@和跟叫让给与说谢看对陪找带是被亲等]))"
    rf"(?P<name>(?P<c>[{_CJK}])(?P=c))(?!(?P=c))"
    "(?=说|和|跟|是|很|也|都|被|又|还|转发|你|要|在|瘦|胖|真|太|的(?![话确])|[，。！？:：,.!?])"
)
# …and one spoken to, whatever stands before it (…盖如如你是我女神, 朵朵生日快乐): what
# follows is said to a person.
_DOUBLED_ADDRESSED_RE = re.compile(
    rf"(?P<name>(?P<c>[{_CJK}])(?P=c))(?!(?P=c))(?=你是我|你真是|你最|生日快乐)"
)
# Dictionary tags a doubled pet name may carry when it is spoken to (甜甜/a, 豆豆/n, 糖糖/n):
# a noun or adjective doubled names a child or a friend; verbs and adverbs (谢谢, 大大) do not.
_PET_NAME_TAGS = frozenset({None, "a", "n"})
# What only a person does: after these a doubled verb (解解, 试试) is a pet name all the same.
_PERSON_ONLY_AFTER = re.compile("说|和|跟|转发|瘦|胖")
# Interjections and onomatopoeia (咩咩, 啦啦, 嘟嘟) double too; their characters name no one.
_PERSON_VERBS = frozenset("看跟和对陪找带给让叫与被亲")
_INTERJECTION_CHARS = frozenset(
    "谁誰哈呵嘿嘻呜哇咯啊哦呀嗷哼咳嘤咿吭咩啦嘛噗喵汪嗯嘟嘀哒叮咚啪嘭呼嘶唉哎嗨嘎呱咕噜哟喔呃嘤"
)
_DOUBLED_WORD_TAGS = frozenset(
    {"d", "v", "vn", "vd", "m", "t", "z", "ad", "p", "c", "u", "q", "ns"}
)
_SENSATIONS = frozenset("痒疼痛酸胀麻辣烫凉热冷晕")
_NOT_DOUBLED_NAMES = frozenset(
    words(
        "宝宝 妈妈 爸爸 哥哥 姐姐 弟弟 妹妹 爷爷 奶奶 姥姥 姥爷 叔叔 舅舅 姑姑 伯伯 婆婆 公公 姨姨 "
        "天天 常常 刚刚 慢慢 渐渐 偏偏 往往 明明 好好 快快 早早 时时 处处 一一 个个 仅仅 稍稍 "
        "微微 悄悄 轻轻 每每 连连 频频 屡屡 久久 "
        # sounds a baby makes or a parent writes
        "哈哈 嗯嗯 呵呵 嘿嘿 哇哇 呜呜 咯咯 啊啊 哦哦 嘻嘻 呀呀 嗷嗷 哼哼 咳咳 嘤嘤 咿咿 吭吭"
    )
)


@dataclass
class HandleAndNicknameRecognizer:
    """@handles, 小X / 老X / 阿X nicknames in their addressing positions, and a child's
    doubled pet name after the word for the child."""

    name: str = "name_handle"

    def find(self, text: str) -> Iterator[Span]:
        for match in _HANDLE_RE.finditer(text):
            start, end = match.span("name")
            if not _handle_starts(text, match.start()):
                continue
            # A handle that is a person's name (@陈思远) is typed as one; others are accounts.
            named = _FULL_NAME.fullmatch(match.group("name"))
            kind = EntityType.NAME if named else EntityType.ID
            yield Span(start=start, end=end, type=kind, text=text[start:end], source=self.name)
        for match in gated(_NICK_GATE, _NICK_RE, text):
            start, end = match.span("name")
            nick = text[start:end]
            if nick[1] in _NOT_GIVEN or is_common_word(nick):
                continue
            yield Span(start=start, end=end, type=EntityType.NAME, text=nick, source=self.name)
        for match in gated(_NICK_GATE, _NICK_AFTER_CLOSE_RE, text):
            start, end = match.span("name")
            if text[end - 1] not in _NOT_GIVEN:
                nick = text[start:end]
                yield Span(start=start, end=end, type=EntityType.NAME, text=nick, source=self.name)
        for match in gated(DOUBLED_GATE, _DOUBLED_RE, text):
            start, end = match.span("name")
            nick = text[start:end]
            if nick in _NOT_DOUBLED_NAMES or nick[0] in _NOT_GIVEN:
                continue
            yield Span(start=start, end=end, type=EntityType.NAME, text=nick, source=self.name)
        for match in gated(DOUBLED_GATE, _DOUBLED_ANYWHERE_RE, text):
            start, end = match.span("name")
            if _doubled_nickname(text, start, end):
                yield name_span(text, start, end, self.name)
        for match in _DOUBLED_ADDRESSED_RE.finditer(text):
            start, end = match.span("name")
            if start > 0 and word_tag(text[start - 1 : start + 1]) is not None:
                continue  # 常|常你…: the pair's first character ends a word before it
            if word_tag(text[start:end]) not in _PET_NAME_TAGS:
                continue  # 谢谢你是我, 大大你最棒: a pair the dictionary knows is that word
            if _doubled_nickname(text, start, end, stops=False):
                yield name_span(text, start, end, self.name)


def _doubled_nickname(text: str, start: int, end: int, *, stops: bool = True) -> bool:
    """The doubled pair ``text[start:end]`` in a person's position is a pet name: no adverb,
    verb, interjection, doubled adjective, sensation, numeral or kin word. ``stops``: nor a
    character that ends names in running text (如, 天), unless the frame says who it is."""
    nick = text[start:end]
    tag = word_tag(nick)
    if tag == "v" and _PERSON_ONLY_AFTER.match(text, end):
        tag = None  # 解解说: whoever speaks is a person
    if nick in _NOT_DOUBLED_NAMES or tag in _DOUBLED_WORD_TAGS:
        return False  # 慢慢, 常常, 看看: an adverb or a verb, not a pet name
    if nick[0] in _INTERJECTION_CHARS:
        return False
    if text[end : end + 1] == "的" and text[start - 1 : start] not in _PERSON_VERBS:
        return False  # 大大的, 深深的: a doubled adjective; 跟猪猪的 is someone's
    if not_a_given_name(nick, stops=stops) or nick[0] in _SENSATIONS:
        return False  # 痒痒, 疼疼: how something feels
    return nick[0] not in _NOT_GIVEN and nick[0] not in _NUMERAL_START


# A span followed by a dosage form or a drug-name syllable is a cut drug name (蒲地|蓝消炎片,
# 雷贝拉|唑): shared by every name recognizer.
_DRUG_CONTINUES = re.compile(
    f"(?:(?:(?![{''.join(sorted(NAME_STOP))}两几一二三])[{_CJK}]){{0,5}}?"
    "(?:缓释片|控释片|肠溶片|分散片|咀嚼片|胶囊|颗粒|注射液|口服液|软膏|乳膏|凝胶|滴眼液|"
    "滴剂|喷雾剂|糖浆|混悬液|干混悬剂|消炎片|丸|膏|脐贴|贴剂|散(?![步心开会])|栓剂|粉(?!丝)|(?<![透暴揭显流表吐露])露(?!露)|"
    "药片|药水|药酒|溶液|洗液|(?<=氏)液|冲剂|合剂|含片|饮片|酊)"
    "|[片汤唑胺酮醇嗪啶])"
)


# A dose or a frequency right after (…0.5g, …每次2粒) or a taking verb right before (吃了…,
# 继续…, 药品名称 …): whatever sits there is a medicine, whatever the dictionary says of it.
_DOSE_AFTER = re.compile(
    r"\s*(?:\d+(?:\.\d+)?\s*(?:mg|g|ml|μg|ug|片|粒|袋|支|丸|包|克|毫升)|每次"
    r"|(?:一日|每日|一天|每天)[一二三两四\d]?次)",
    re.IGNORECASE,
)
_TAKING_BEFORE = re.compile(
    r"(?:吃了|吃的|吃过|吃着|服用|服了|服过|喝了|喝的|喝过|继续|用了|用的|用过|用着|在用|外用|口服|"
    r"涂了|涂过|抹了|抹过|擦了|擦过|加用|停用|停了|换成|改用|开了|开的|买了|买的|药品名称|药名|"
    r"(?:让我|叫我|建议|开始|一直|正在|我在|还在|准备|打算|只能)用|"
    r"(?<![小好难请])吃|(?<![好难])喝|服|涂|抹)\s*$"
)
# …and what is said of a medicine right after its name (…的副作用, …一天三次, …可以吃吗).
_USED_AFTER = re.compile(
    r"(?:的?副作用|的?说明书|的?用法|的?剂量|的?疗效|能不能吃|能不能用|可以吃吗|可以用吗|"
    r"(?:能|可以|还能|还可以)(?:继续|一直|长期|再|接着|经常|每天)(?:吃|用|服|涂|抹)[吗吧呢]|"
    r"(?:能|可以|能不能)?一起(?:吃|用|服)(?:[吗吧呢]|(?![\u4e00-\u9fff]))|"
    # taken with another medicine: …和头孢能一起吃吗 (not …和弟弟…: people eat together)
    r"[和跟与及](?![^，。？！]{0,10}?(?:弟|妹|哥|姐|孩|宝|娃|儿|女|公|婆|爸|妈|爷|奶|我|你|他|她|们))"
    r"[\u4e00-\u9fff]{1,10}?(?:能|可以|能不能)一起(?:吃|用|服)(?:[吗吧呢]|(?![\u4e00-\u9fff]))|"
    r"管用吗|有效吗|一[天日]\s*[一二三四两\d]\s*次|怎么(?:吃|用|服)(?:[吗呢]|(?![\u4e00-\u9fff]))|"
    r"(?:吃|用)多久|能吃吗|能用吗|\s*规格)"
)
_TITLE_AFTER = re.compile(f"[{_CJK}]{{0,2}}(?:{AFTER_TITLES})")


# Drug names are built from stems (WHO INN stems in their Chinese transliteration: 孟鲁司特,
# 吉非替尼, 罗格列酮, 华法林) and chemical-class characters no given name uses (…唑, …胺, …钠).
# A name candidate that ends in such a stem, or runs on into one, is a cut drug name.
_INN_STEM = re.compile(
    "(?:司特|必利|沙星|西林|洛尔|普利|沙坦|他汀|替尼|单抗|珠单|霉素|环素|头孢|列酮|格列|地平|替丁|拉唑|"
    "前列|卡因|昔布|那敏|法林|曲坦|巴坦|洛韦|他韦|匹韦|布韦|西泮|唑仑|西汀|曲林|培南|匹林|米松|"
    "尼松|卡松|奈德|沙明|莫司|利司|帕胺|噻嗪|地尔|岛素|生素|激素|[唑胺酮醇嗪啶酚铵钠钾钙苷肟酯烷烯炔酸])"
)
# Traditional-medicine herbs end in plant-part or herb-only characters (石斛, 黄芪, 秦皮,
# 柏子仁, 蒲公英, 田七); given names do not.
_HERB_END = re.compile(
    "(?<![小老阿])(?:[斛芪苓芍芎蒡苋萸蓟芩蔻蒿藜膝藤皮参术黄砂麦七草胶]|子仁|公英|黄连)$"
)
_FORM_END = re.compile("(?:片|胶囊|颗粒|丸|膏|汤|液|贴|散|栓|剂|糖浆|粉)$")
_HERB_PAIR = re.compile("子仁|公英|黄连")
# What may run on after a cut drug name: Han characters up to a function word or a numeral.
_RUN_ON = re.compile(
    f"(?:(?![的了是在和与说吗呢吧啊呀我你他她也就都很又还把被让给对两几一二三])[{_CJK}]){{0,3}}"
)


# Diseases and organisms named after people (唐氏综合征, 霍奇金淋巴瘤, 柯萨奇病毒): the person's
# name is part of a clinical term when a disease or organism word follows it.
_EPONYM_AFTER = re.compile(
    f"(?:(?:(?![{''.join(sorted(NAME_STOP))}两几一二三])[{_CJK}]){{0,4}}?"
    "(?:综合征|综合症|病毒|杆菌|球菌|螺旋体|淋巴瘤|肉瘤|血症|贫血|丝虫|试验|征)"
    "|病(?![了情人历房假床号区友重危])|症(?!状)|菌|瘤)"
)


# A body part no given name holds and a symptom after it (膝肿, 腰疼, 踝痛): a complaint.
_BODY_SYMPTOM = re.compile("[膝腰腿脚踝肘腕肩颈喉胃肚肝肾腹背臀][肿疼痛痒麻胀酸]")


def clinical_term_shaped(text: str, start: int, end: int) -> bool:
    """Whether the name candidate ``text[start:end]`` is part of a drug, herb or eponymous
    disease name: by its stem or herb ending, by a stem, dosage form or disease word running
    on after it, or by a dose right after it. Shared by every name recognizer and the NER's
    person vetoes."""
    if _DRUG_CONTINUES.match(text, end) or _DOSE_AFTER.match(text, end):
        return True
    if _EPONYM_AFTER.match(text, end):
        return True
    if 2 <= end - start <= 3 and _HERB_END.search(text, start, end):
        return True
    if _FORM_END.search(text, start + 1, end):
        return True  # 童康片: the dosage form inside the candidate
    if _BODY_SYMPTOM.search(text, start + 1, end + 1):
        return True  # 左膝肿, 右腰疼: a side and a body part with its symptom
    pair = _HERB_PAIR.search(text, start + 1, end + 1)
    if pair is not None and pair.end() >= end:
        return True  # 胡黄|连
    run_end = _RUN_ON.match(text, end).end()  # type: ignore[union-attr]
    return any(m.end() >= end for m in _INN_STEM.finditer(text, start + 1, run_end))


def used_like_a_drug(text: str, start: int, end: int) -> bool:
    """A taking verb right before (吃了…, 服用…) or a medicine's attribute right after
    (…的副作用): whatever sits there is a medicine, unless a title follows (吃了张医生开的药)."""
    if _TITLE_AFTER.match(text, end):
        return False
    return _taken_before(text, start) or _USED_AFTER.match(text, end) is not None


_LONGEST_TAKING = 4  # 药品名称


def _taken_before(text: str, start: int) -> bool:
    """``_TAKING_BEFORE`` ending at ``start``: its verb ends where the blanks before
    ``start`` begin, so the search starts a few characters before that, not at 0."""
    verb_end = start
    while verb_end > 0 and text[verb_end - 1].isspace():  # what \s matches
        verb_end -= 1
    lo = max(0, verb_end - _LONGEST_TAKING)
    if _TAKING_BEFORE.search(text, lo, start) is not None:
        return True
    # The next medicine of a list after a taking verb (吃了汤臣倍健和白加黑, 在用A、B).
    return _TAKEN_IN_A_LIST.search(text, max(0, start - 14), start) is not None


_TAKEN_IN_A_LIST = re.compile(
    r"(?:吃了|吃过|在吃|服用|服了|用了|在用|用过|喝了|涂了|开了)[\u4e00-\u9fff]{2,8}[和、及加]\s*$"
)


# Surnames that are first of all conjunctions or prepositions joining what stands on both
# sides (我和|思远, 取决于|明): never taken back, even where a clause starts.
_FUNCTION_SURNAMES = frozenset("和于")


def _clause_starts(text: str, at: int) -> bool:
    """Nothing a word is made of before ``at``: the text's start, a punctuation mark, a
    space or a symbol (〜, #, 】)."""
    return at == 0 or not (text[at - 1].isalnum() or _CJK_CHAR.match(text, at - 1))


def surname_left_out(text: str, start: int, end: int) -> int:
    """``start``, or one less where a model's two-character person span is a given name whose
    surname it left outside (曾|若彤): the character before is a surname that is no function
    word (和, 于; rare ones such as 班 count), the two run into no dictionary word, and nothing
    before it ends a word with it. A surname that is also a word (向, 万, 白) counts where a
    clause starts (〜向|雅琳): nothing before it for it to be the preposition or numeral of."""
    if end - start != 2 or start == 0:
        return start
    surname = text[start - 1]
    if surname not in SINGLE_SURNAMES or surname in _FUNCTION_SURNAMES:
        return start
    if surname in WORDLIKE_SURNAMES and not _clause_starts(text, start - 1):
        return start  # 我们向|小明: a wordlike surname counts only where a clause starts
    if text[start] in SINGLE_SURNAMES and text[start] not in AMBIGUOUS_SURNAMES:
        return start  # 王|李明: the span starts with a surname of its own
    if _word_tags().get(text[start - 1 : start + 1]) is not None:
        return start  # 高|兴华: the surname and the first given character make a word
    if start >= 2 and _word_tags().get(text[start - 2 : start]) is not None:
        return start  # 感谢|谢…: the surname character ends a word before it
    return start - 1


def nickname_shaped(name: str) -> bool:
    """小, 老 or 阿 and one character (小平, 阿辛): a nickname, never a drug or brand name,
    whatever syllable it ends with."""
    return len(name) == 2 and name[0] in "小老阿" and "\u4e00" <= name[1] <= "\u9fff"
