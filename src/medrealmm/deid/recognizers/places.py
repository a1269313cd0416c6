"""Places finer than a city that are not a street address: an estate with its building-unit-room
in figures (翠湖苑9-3-2301), a Hong Kong estate's block, floor and flat (禾輋邨豐順樓12樓1203室),
map coordinates pasted from an app (decimal and degree-minute-second), a landmark given as
where one lives (我家就在万达广场旁边), and a school with its grade and class. Postal codes are
labelled fields (``identifier_labels.yaml``).
"""

from __future__ import annotations

import re

from medrealmm.deid.recognizer import RegexRecognizer
from medrealmm.deid.recognizers.common import ADDRESS_STOP, CJK, STOP, cjk_proper
from medrealmm.deid.spans import EntityType

# An estate or a compound, then building-unit-room as three numbers (3-1-3001, 40-4-2602): the
# room number of three or four digits tells it from a date or a range.
_ESTATE_WORD = (
    r"(?:新城|小区|花园|家园|公寓|新村|宿舍|大院|苑|城|园|府|庭|湾|居|邸|里|坊|邨|阁|轩|郡|"
    r"山庄|公馆|广场|名都|华庭|大厦|中心)"
)
DASHED_UNIT = RegexRecognizer(
    name="dashed_unit",
    gate=re.compile(r"\d-\d{1,2}-\d{3}"),
    type=EntityType.ADDRESS,
    patterns=[
        re.compile(
            rf"(?P<v>{cjk_proper(1, 10, ADDRESS_STOP)}{_ESTATE_WORD}\s?"
            r"\d{1,3}-\d{1,2}-\d{3,4})(?![\d-])"
        )
    ],
    group="v",
)

# Hong Kong and Macau: an estate (邨, 苑, 花园, 城 …), a named block (豐順樓, 海景閣), then the
# floor and the flat (12樓1203室, 8樓A室, 15/F Flat C).
HK_ESTATE_FLAT = RegexRecognizer(
    name="hk_estate_flat",
    gate=re.compile(r"楼|樓|/F", re.IGNORECASE),
    type=EntityType.ADDRESS,
    patterns=[
        re.compile(
            rf"(?P<v>{cjk_proper(2, 10, ADDRESS_STOP)}{_ESTATE_WORD}"
            rf"[{CJK}A-Za-z]{{1,4}}(?:楼|阁|座|大厦|苑)\s?"
            r"(?:\d{1,2}\s?(?:楼|/F)|[低中高]层)\s?(?:[A-Za-z]|\d{1,4})?\s?(?:室|号)?)"
            r"(?![\d])",
            re.IGNORECASE,
        )
    ],
    group="v",
)

# Coordinates from a map app: a latitude and a longitude with three or more decimals, with or
# without N/E or 北纬/东经; or in degrees, minutes and seconds (N31°13′45″ E121°28′12″).
_DEC_LAT = r"[-+]?(?:[1-8]?\d|90)\.\d{3,8}\s?°?\s?[NSns]?"
_DEC_LON = r"[-+]?(?:1[0-7]\d|0?\d{1,2}|180)\.\d{3,8}\s?°?\s?[EWew]?"
_DMS = r"\d{1,3}\s?°\s?\d{1,2}\s?[′'’]\s?(?:\d{1,2}(?:\.\d+)?\s?[″\"”])?"
_HEMI = r"(?:[NSEWnsew]|北纬|南纬|东经|西经)"
COORDINATES = RegexRecognizer(
    name="coordinates",
    gate=re.compile(r"\d\.\d{3}|°"),
    type=EntityType.ADDRESS,
    patterns=[
        re.compile(
            rf"(?:(?:北纬|南纬)\s?)?(?<![\d.]){_DEC_LAT}\s?[,，、/;； ]\s?"
            rf"(?:(?:东经|西经)\s?)?{_DEC_LON}(?![\d.])"
        ),
        re.compile(rf"{_HEMI}?\s?{_DMS}\s?{_HEMI}?[,，、/ ]*\s?{_HEMI}?\s?{_DMS}\s?{_HEMI}?"),
    ],
)

# A landmark given as where one lives: a named place (a name and a place word) next to 家 and a
# word of nearness (我家就在万达广场旁边, 我家楼下就是人民公园, 住在人民医院对面).
_LANDMARK_WORD = (
    r"(?:广场|公园|商场|超市|大厦|商城|百货|中心|地铁站|车站|火车站|汽车站|公交站|菜市场|市场|"
    r"银行|酒店|宾馆|影城|电影院|体育馆|图书馆|博物馆|寺|庙|教堂|大桥|桥|大楼|派出所|邮局|"
    r"小学|中学|大学|幼儿园|医院|卫生院|药店|大药房|加油站|步行街|夜市|村委会|居委会|书店|书城|"
    r"商店|饭店|餐厅|酒楼|茶楼|网吧|影院|剧院|游乐场|体育场|菜场)"
)
_NEAR = r"(?:旁边|附近|对面|隔壁|边上|后面|后头|前面|楼上|楼下|那边|那块|门口|周边|一带)"
_HOME = r"(?:我|我们|俺|咱|咱们|我妈|我爸)家"
_PLACE = rf"(?P<v>(?:(?![{STOP}])[{CJK}A-Za-z0-9]){{1,10}}?{_LANDMARK_WORD})"
LANDMARK_NEAR_HOME = RegexRecognizer(
    name="landmark_near_home",
    gate=re.compile(r"家|住"),
    type=EntityType.ADDRESS,
    patterns=[
        re.compile(rf"{_HOME}(?:就|住)?(?:在|住在)?{_PLACE}(?:的)?{_NEAR}"),
        re.compile(rf"{_HOME}{_NEAR}(?:就是|是|有个|有一个|有家|有一家|那个)?{_PLACE}"),
        re.compile(rf"(?:住在|就住|家住)(?:在)?{_PLACE}(?:的)?{_NEAR}"),
        re.compile(rf"离{_HOME}(?:很近|不远|挺近)的{_PLACE}"),
    ],
    group="v",
)

# A school with its grade and class (育才小学三年级二班, 实验中学初二(3)班, 高一3班): the class
# narrows the school to a few dozen children.
_SCHOOL = r"(?:小学|中学|一中|二中|三中|四中|附中|附小|实验学校|学校|幼儿园|职高|中专)"
_CN = "一二三四五六七八九十"
_GRADE_CLASS = (
    rf"(?:[{_CN}\d]年级|[初高][{_CN}]|[初高]中[{_CN}]年级)?"
    rf"\s?(?:[(（]?\s?\d{{1,2}}\s?[)）]?|[{_CN}]{{1,3}})班"
    r"|[大中小]班"
    rf"|[{_CN}\d]年级(?![{_CN}\d]{{1,3}}班)"
)
# School names hold 向, 来 and 回 (向阳小学, 来凤中学, 回民小学): plain function words end them.
_SCHOOL_STOP = STOP.replace("向", "").replace("来", "").replace("回", "")
SCHOOL_CLASS = RegexRecognizer(
    name="school_class",
    gate=re.compile(r"班|年级"),
    type=EntityType.ORG,
    patterns=[
        re.compile(
            rf"(?P<v>{cjk_proper(1, 10, _SCHOOL_STOP)}{_SCHOOL}\s?(?:{_GRADE_CLASS}))",
        )
    ],
    group="v",
)
