"""Sub-city addresses, in simplified and traditional characters: districts, streets, villages,
roads (with a section 段, lane 巷 or alley 弄, as Taiwan and Hong Kong write them), house
numbers, compounds and building-unit-room (3栋2单元501, 12幢, 5棟3單元). An address with no
city is still masked. A city or province named alone is kept (see docs/DEIDENTIFICATION.md).
"""

from __future__ import annotations

import re

from medrealmm.deid.recognizer import RegexRecognizer
from medrealmm.deid.recognizers.common import (
    ADDRESS_STOP,
    CJK,
    HOSPITAL_STOP,
    cjk_proper,
    common_word,
    word_tag,
)
from medrealmm.deid.spans import EntityType, words

_BODY_CHARS = "腔腹胸心肝肺肾脑颈腰骶臀股腿臂肩背部膜眼耳鼻口咽喉皮骨前后左右上下内外中"
NOT_DISTRICTS = frozenset(
    words(
        "病区 市区 郊区 城区 山区 景区 校区 社区 园区 厂区 小区 误区 禁区 疫区 牧区 地区 专区 "
        "分区 片区 辖区 新区 老区 灾区 盲区 雷区 重灾区 高发区 风险区 流行区 县城 城镇 "
        "家乡 老乡 城乡 农村 乡村 新农村 山村 渔村 村村"
    )
)
# The city is kept when named alone (去了上海), but masked as the head of a full address
# (南宁市徐汇县…): there it narrows the address, and the rest is masked anyway.
_CITY = rf"(?P<city>(?:{cjk_proper(2, 3, ADDRESS_STOP)}省)?{cjk_proper(2, 4, ADDRESS_STOP)}市)"
# County names hold 回 and 来 (隆回县, 来凤县), which end other proper nouns; 家 still ends one
# (回老家县医院).
_DISTRICT = rf"(?P<district>{cjk_proper(2, 4, HOSPITAL_STOP + '省市家')}(?:区|县|旗))"
# A town's name may be one character right after its county (…县阳镇), never on its own.
_STREET = (
    rf"(?P<street>(?:{cjk_proper(2, 6, ADDRESS_STOP)}|(?<=[县区旗])(?![{ADDRESS_STOP}])[{CJK}])"
    r"(?:街道|镇|乡))"
)
# Rural addresses: a village (…村, …屯) and its group (三组, 5队); the village name may hold 家
# (兰家村), so only function words and higher units end it.
_VILLAGE = rf"(?P<village>{cjk_proper(1, 5, HOSPITAL_STOP + '省市县区镇乡')}(?:村|屯|嘎查))"
_GROUP = r"(?P<group>[一二三四五六七八九十\d]{1,3}\s*(?:组|队|社))"
_ROAD = rf"(?P<road>{cjk_proper(1, 6, ADDRESS_STOP)}(?:大道|路|街|巷|胡同|弄))"
_NUMBER = r"(?P<number>\d{1,5}\s*(?:号院|号|弄))"
_COMPOUND = (
    rf"(?P<compound>(?:(?![{ADDRESS_STOP}])[{CJK}0-9A-Za-z]){{2,10}}"
    r"(?:小区|花园|家园|公寓|大厦|新村|苑|社区))"
)
# An office or residential building after a road or house number (…478号华星时代广场, …大道保利
# 国际中心): on its own such a name (体检中心) is no address, so it only extends one.
_BUILDING = (
    rf"(?P<building>(?:(?![{ADDRESS_STOP}])[{CJK}0-9A-Za-z]){{2,10}}?"
    r"(?:广场|中心|大楼|大厦|商厦|写字楼|公馆|家属院|宿舍楼?|家属楼|华庭|华府|名苑|雅苑|花苑))"
)
# Building, entrance, floor and room (3号楼2单元501, A座1203, 5-2-301): the room number may
# stand bare after a unit word.
_UNIT_BODY = (
    r"(?:[A-Za-z\d]{1,4}\s*(?:栋|幢|号楼|座|单元|楼|层|室|号)\s*)+"
    r"(?:[-—]?\d{2,4}(?:室|房|号)?(?![\d.]))?"
)
_UNIT = rf"(?P<unit>{_UNIT_BODY})"
# 号 after 证/历/单/卡 is a record number's label, not a house number. The first characters are
# checked first: the lookbehind keeps the regex engine from deriving them itself.
ADDRESS_ANCHOR = (
    "[区县旗镇乡路街巷弄苑村屯组]|(?<![证历单卡码账编型])号|胡同|小区|花园|家园|公寓|大厦|新村"
)
ADDRESS_ANCHOR_FIRST = "(?=[区县旗镇乡路街巷弄苑村屯组号胡小花家公大新])"
# Where the full pattern matches only the empty string (most positions: a window spans 40
# characters around one anchor), it is costly to find that out. A non-empty match starts
# with up to five digits, numerals or letters and a group, number or unit word (三组, 12号,
# A座), or with one to ten name characters and then a unit word (…市, …区, …路, …小区); this
# lookahead checks just that first, with the stop characters every part shares, so it skips
# no non-empty match.
_SHARED_STOP = "".join(sorted(set(ADDRESS_STOP) & set(HOSPITAL_STOP + "省市县区镇乡")))
_ADDRESS_START = (
    r"(?=[\dA-Za-z一二三四五六七八九十]{1,5}\s*[组队社号弄栋幢座单楼层室]"
    rf"|(?:(?![{_SHARED_STOP}])[{CJK}0-9A-Za-z]){{1,10}}?"
    r"(?:[省市区县旗街镇乡村屯嘎路巷胡弄苑]|大道|大厦|小区|花园|家园|公寓|新村|社区))"
)
_ADDRESS_RE = re.compile(
    _ADDRESS_START + rf"(?:{_CITY}(?=[{CJK}]{{2,}}(?:区|县|旗|镇|乡|村|路|街)))?"
    rf"(?:{_DISTRICT})?(?:{_STREET})?(?:{_VILLAGE})?(?:{_GROUP})?(?:{_ROAD})?(?:{_NUMBER})?"
    rf"(?:{_COMPOUND}|(?<=[号路街道巷弄])(?:{_BUILDING}))?(?:{_UNIT})?"
)
_ADDRESS_CUE = re.compile(r"(?:住在|住|家在|位于|地址|在|搬到|来自)[:：\s]*$")


_NOT_ALONE = ({"building", "unit"}, {"number"}, {"group"})


_QUESTION_WORDS = ("什么", "哪个", "哪", "啥", "那个", "这个", "某")


def _valid_address(match: re.Match[str]) -> EntityType | None:
    parts = {k: v for k, v in match.groupdict().items() if v}
    if parts.keys() == {"city"}:
        return None
    parts.pop("city", None)
    # A unit, a house number or a group alone is no address, nor a building with at most a
    # unit (体检中心3楼).
    if not parts or any(set(parts) <= alone for alone in _NOT_ALONE):
        return None
    if set(parts) == {"village"} and (
        parts["village"] in NOT_DISTRICTS or common_word(parts["village"])
    ):
        return None
    district = parts.get("district")
    generic = district and (
        district in NOT_DISTRICTS
        or any(c in _BODY_CHARS for c in district[:-1])
        or district.startswith(_QUESTION_WORDS)  # 有什么区别: a question, no district
    )
    if generic and len(parts) == 1:
        return None
    street = parts.get("street")
    if street and street in NOT_DISTRICTS and len(parts) == 1:
        return None
    if set(parts) == {"road"}:
        # A bare 'xx路' is too often a word (思路, 走路); need a cue before it.
        before = match.string[max(0, match.start() - 4) : match.start()]
        return EntityType.ADDRESS if _ADDRESS_CUE.search(before) else None
    if set(parts) == {"compound"} and parts["compound"].endswith("社区"):
        return None
    return EntityType.ADDRESS


ADDRESS = RegexRecognizer(
    name="address",
    type=EntityType.ADDRESS,
    patterns=[_ADDRESS_RE],
    validate=_valid_address,
    anchor=re.compile(ADDRESS_ANCHOR_FIRST + f"(?:{ADDRESS_ANCHOR})"),
    reach=(16, 24),
)

# A place and a house number with no road or unit word between (西塘桥南318号, 江湾1024号):
# the house number makes it an address. Three or more digits (a day of the month is 3号),
# and no label character in the name (挂号单, 工号, 床, 第): those number other things.
_LABEL_CHARS = frozenset("号码票证卡编第期次床房室科窗台班级届周月日天年")
# A dictionary word before the number is a place only if it ends like one (江堤, 河湾), not
# like a role or a thing (会员, 套餐).
_PLACE_END = frozenset("堤桥湾营村庄屯坝口港岗坡沟河湖山岭园场塘门里头东南西北街道寨铺集墩滩洲")


def _valid_house_number(match: re.Match[str]) -> EntityType | None:
    place = match.group("place")
    if any(c in _LABEL_CHARS for c in place):
        return None
    if common_word(place) and place[-1] not in _PLACE_END:
        return None
    return EntityType.ADDRESS


ADDRESS_HOUSE_NUMBER = RegexRecognizer(
    name="address_house_number",
    gate=re.compile(r"\d{3}号"),
    type=EntityType.ADDRESS,
    patterns=[
        re.compile(
            rf"(?P<place>{cjk_proper(2, 6, HOSPITAL_STOP)})[1-9]\d{{2,4}}\s*号(?![码床])"
            rf"(?:院|楼)?"
        )
    ],
    validate=_valid_house_number,
)

# Words for where someone lives or a parcel goes (住在…, 收货地址…): what follows is an address.
_WHERE_ONE_LIVES = "家在|住在|家住|住址|地址|寄到|寄至|寄往|搬到|收货地址"

# An address given after a cue, in whatever form (建国门内51号, 西塞456号): the cue and the
# house number bound it.
ADDRESS_BY_CUE = RegexRecognizer(
    name="address_by_cue",
    gate=re.compile(r"\d号"),
    type=EntityType.ADDRESS,
    patterns=[
        re.compile(
            rf"(?:{_WHERE_ONE_LIVES})[:：\s]*"
            rf"(?P<v>{cjk_proper(2, 16, HOSPITAL_STOP)}\d{{1,5}}\s*号(?:之\d{{1,3}}|院|楼)?"
            rf"(?:{_UNIT_BODY})?)"
        )
    ],
    group="v",
)


# A numbered lane, as Beijing numbers its hutongs (北新仓三条, 东四十条): a road after a name.
_NUMBERED_LANE = "[一二三四五六七八九十]{1,3}条"

# A road and its house number, with what may stand between (a section, a lane, an alley) and
# after (a floor, 之 and a sub-number, a unit): 人民南路四段27号, 忠孝東路四段100巷5弄3號5樓之2,
# 彌敦道123號. A district or street before it belongs to it (碑林區…).
_ROAD_NUMBER = re.compile(
    # the city heads a full address (花蓮市正義街31號, 玉溪市 三官殿路789号): masked with it
    rf"(?:{cjk_proper(2, 4, ADDRESS_STOP)}市\s?"
    rf"(?=[^\d\s]{{1,8}}?(?:大道|路|街|道|巷|胡同|里|弄|{_NUMBERED_LANE})))?"
    rf"(?P<area>(?:{cjk_proper(2, 4, ADDRESS_STOP)}(?:区|區|县|縣|镇|鎮|乡|鄉|街道)){{1,2}})?"
    rf"(?:(?P<road>{cjk_proper(1, 8, ADDRESS_STOP)}"
    rf"(?P<kind>大道|路|街|道|巷|胡同|里|弄|{_NUMBERED_LANE}))"
    # after a district or street, a place of any name (竹笆市68号)
    rf"|(?(area){cjk_proper(2, 6, HOSPITAL_STOP)}|(?!)))"
    r"(?:(?:[一二三四五六七八九十\d]{1,2}|[东西南北中東])段)?(?:\d{1,4}(?:巷|弄|衖)){0,2}"
    r"(?P<n>\d{1,5})(?:之\d{1,3})?\s*[号號](?![码碼床])(?:之\d{1,3})?"  # 23號之4 (Taiwan)
    r"(?:\d{1,2}\s*(?:樓|楼|F|层|層)(?:之\d{1,3})?)?"
    rf"(?:{_UNIT_BODY})?"
)


def _valid_road_number(match: re.Match[str]) -> EntityType | None:
    road, kind = match.group("road"), match.group("kind")
    if road is None:
        return EntityType.ADDRESS  # a place after its district or street
    name = road[: -len(kind)]
    if kind in ("道", "里") and (len(name) < 2 or int(match.group("n")) < 10):
        return None  # 知道3号, 这里5号: a word, then a day of the month
    if kind.endswith("条") and (len(name) < 2 or common_word(name)):
        return None  # 坐三条3号线: a count of things, not a lane
    if common_word(road) and len(name) < 2 and not match.group("area"):
        return None  # 一路, 马路, 思路 (a named road with a number, 中山路58号, stays one)
    return EntityType.ADDRESS


ROAD_NUMBER = RegexRecognizer(
    name="road_number",
    gate=re.compile(r"\d\s*[号號]"),
    type=EntityType.ADDRESS,
    patterns=[_ROAD_NUMBER],
    validate=_valid_road_number,
    anchor=re.compile(r"\d\s*[号號]"),
    reach=(30, 16),
)

# A road under the city or county that heads it, the district between written without its
# 区 (…市 朝阳中山路12号, …县城关建设街B座): the head and the road bound the place between,
# and a house number or a building closes it.
_HEADED_PLACE = cjk_proper(1, 10, HOSPITAL_STOP + "省市县縣")  # holds 都 and 家 (魏都, 张家港)
_HEAD = rf"(?P<head>{cjk_proper(1, 4, HOSPITAL_STOP + '个回省市县縣')}[市县縣])\s?"
_HEADED_WAY = rf"(?:{_HEADED_PLACE}\s)?{_HEADED_PLACE}?"  # a district, a blank, a road's name
_HEADED_ROAD = re.compile(
    rf"(?P<v>{_HEAD}{_HEADED_WAY}(?:大道|路|街|巷|胡同|{_NUMBERED_LANE})\s?"
    r"(?:\d{1,5}\s*[号號](?![码碼床线])|[A-Za-z\d]{1,4}\s*(?:栋|幢|棟|号楼|號樓|座))"
    rf"(?:{_UNIT_BODY})?)"
)
# After a word for where someone lives, the number may be left out (住在…市 城北 解放路), or
# the road too (家住…县武康，): the word says the rest is an address.
_HEADED_BY_CUE = re.compile(
    rf"(?:{_WHERE_ONE_LIVES})[是为:：\s]*"
    rf"(?P<v>{_HEAD}(?:{_HEADED_WAY}(?:大道|路|街|巷|胡同)"
    rf"|(?P<tail>{cjk_proper(2, 4, HOSPITAL_STOP + '省市县縣')})(?=[，。,.;；！!？?\s]|$)))"
)


# Dictionary tags of a head's name that no place has: 老家|县, 这个|市 are no county or city.
_NOT_PLACE_TAGS = frozenset(words("n r v d a f t m q p c u"))


def _valid_headed_road(match: re.Match[str]) -> EntityType | None:
    head = match.group("head")
    if len(head) == 2 and common_word(head):
        return None  # 超市, 城市: a word, not a one-character city
    if len(head) > 2 and word_tag(head[:-1]) in _NOT_PLACE_TAGS:
        return None
    tail = match.groupdict().get("tail")
    if tail and (tail in NOT_DISTRICTS or word_tag(tail) in _NOT_PLACE_TAGS):
        return None  # …市中心, …市郊区: a part of any city, not a place in it
    return EntityType.ADDRESS


HEADED_ROAD = RegexRecognizer(
    name="headed_road",
    gate=re.compile(r"[市县縣]"),
    type=EntityType.ADDRESS,
    patterns=[_HEADED_ROAD, _HEADED_BY_CUE],
    validate=_valid_headed_road,
    group="v",
    anchor=re.compile(r"[市县縣]"),
    reach=(14, 30),
)

# Building, unit and room with or without the estate before them (阳光花园3栋2单元501, 翠苑
# 12幢3单元402室, 5棟3單元, 7号楼1单元302): a residential building word (栋, 幢, 棟, 号楼) with a
# unit or a room. 门诊3号楼5层 has neither and stays: it is where a clinic is.
_ESTATE_UNIT = re.compile(
    rf"(?P<estate>(?:(?![{ADDRESS_STOP}])[{CJK}A-Za-z]){{2,10}}?"
    r"(?:[\d一二三四五六七八九十]{1,2}[期区區])?)?"
    r"(?P<building>第?[A-Za-z\d一二三四五六七八九十]{1,4}\s*(?:栋|幢|棟|号楼|號樓|座))"
    # the entrance: 单元, or 门 in the north (21号楼2门604)
    r"(?P<unit>\s*[\d一二三四五六七八九十]{1,2}\s*(?:单元|單元|门(?!诊|診)|門(?!診)))?"
    r"(?P<floor>\s*\d{1,2}\s*(?:楼|樓|层|層))?"
    # the room, or the flat's letter after the floor (Macau and Hong Kong: 8樓A)
    r"(?P<room>\s*[A-Za-z]?\d{2,4}\s*(?:室|房|号|號)?|(?<=[楼樓层層])[A-Za-z](?![A-Za-z]))?"
    r"(?![\d.])"
)


_HOME_CUE = re.compile(r"(?:住在|家住|我住|家在|地址|住址)[是:：\s]*$")


def _valid_estate_unit(match: re.Match[str]) -> EntityType | None:
    if not (match.group("unit") or match.group("room")):
        # a building alone only where someone says they live there (我住在万科城3期7栋)
        before = match.string[max(0, match.start() - 4) : match.start()]
        home = _HOME_CUE.search(before) and not match.group("building").endswith("座")
        return EntityType.ADDRESS if home else None
    estate = match.group("estate") or ""
    if match.group("building").endswith("座") and not (estate or match.group("unit")):
        return None  # A座1203 alone may be an office
    return EntityType.ADDRESS


ESTATE_UNIT = RegexRecognizer(
    name="estate_unit",
    gate=re.compile(r"栋|幢|棟|号楼|號樓|座"),
    type=EntityType.ADDRESS,
    patterns=[_ESTATE_UNIT],
    validate=_valid_estate_unit,
    anchor=re.compile(r"栋|幢|棟|号楼|號樓|座"),
    reach=(16, 16),
)

# Districts, towns and townships in traditional characters (大安區, 沙田區, 新竹縣竹東鎮): the
# simplified ones are parts of ``ADDRESS``.
_TRADITIONAL_NOT_DISTRICTS = frozenset(
    words(
        "病區 市區 郊區 城區 山區 景區 校區 社區 園區 廠區 小區 誤區 禁區 疫區 牧區 地區 專區 "
        "分區 片區 轄區 新區 老區 災區 盲區 雷區 重災區 高發區 風險區 流行區 縣城 城鎮 鄉鎮 家鄉 "
        "老鄉 城鄉 農村 鄉村 山村"
    )
)
_TRADITIONAL_DISTRICT = re.compile(
    rf"{cjk_proper(2, 4, ADDRESS_STOP + '區縣鎮鄉')}(?:區|縣|鎮|鄉)"
    rf"(?:{cjk_proper(2, 4, ADDRESS_STOP + '區縣鎮鄉')}(?:區|鎮|鄉|里|村))?"
)


def _valid_traditional_district(match: re.Match[str]) -> EntityType | None:
    first = re.match(r".+?[區縣鎮鄉]", match.group()).group()
    if first in _TRADITIONAL_NOT_DISTRICTS or first[-2:] in _TRADITIONAL_NOT_DISTRICTS:
        return None
    if any(c in _BODY_CHARS for c in first[:-1]) or common_word(first):
        return None
    return EntityType.ADDRESS


TRADITIONAL_DISTRICT = RegexRecognizer(
    name="traditional_district",
    gate=re.compile(r"區|縣|鎮|鄉"),
    type=EntityType.ADDRESS,
    patterns=[_TRADITIONAL_DISTRICT],
    validate=_valid_traditional_district,
    anchor=re.compile(r"區|縣|鎮|鄉"),
    reach=(8, 8),
)


# An estate named after a word for where someone lives (我住汇景新城, 家在翠湖湾): its own name
# word (新城, 府, 湾, 里 …) is too common elsewhere to go without that word.
_NOT_ESTATES = frozenset(
    words(
        "幼儿园 幼兒園 托儿所 公园 公園 动物园 植物园 游乐园 乐园 校园 果园 菜园 庄园 陵园 墓园 "
        "产业园 工业园 科技园 学生公寓 青年公寓 人才公寓 养老公寓 老年公寓"
    )
)


def _not_an_estate(name: str) -> bool:
    return name in _NOT_ESTATES or any(name.endswith(w) for w in _NOT_ESTATES) or common_word(name)


ESTATE_BY_CUE = RegexRecognizer(
    name="estate_by_cue",
    gate=re.compile(r"住|家在|地址"),
    type=EntityType.ADDRESS,
    patterns=[
        re.compile(
            r"(?:住在|家住|我住|家在|住址|地址|搬到)[是为為:：\s]*"
            rf"(?P<v>{cjk_proper(2, 8, ADDRESS_STOP)}"
            r"(?:新城|小区|小區|花园|花園|家园|家園|公寓|新村|苑|社区|社區|府|庭|湾|灣|居|邸|园|園|"
            r"大院|山庄|山莊|公馆|公館|广场|廣場|名都|华庭|華庭))"
            r"(?![\u4e00-\u9fff])"
        )
    ],
    group="v",
    validate=lambda m: None if _not_an_estate(m.group("v")) else EntityType.ADDRESS,
)
