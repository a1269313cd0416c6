"""One test per row of the coverage matrix in docs/DEIDENTIFICATION.md that the rules own.

Each row lists varied examples (simplified and traditional characters, the formats of the
mainland, Hong Kong, Macau and Taiwan) and the value that must be masked with its
placeholder type; the last rows list what must stay: product codes, clinical values, clock
times, ages and places at city level or above. Rules only (no model), so the table runs fast.
"""

from __future__ import annotations

from functools import cache

import pytest

from medrealmm.deid.registry import Registry, rules_registry
from medrealmm.deid.spans import EntityType, Span
from medrealmm.deid.text import find_spans

ID, PHONE, EMAIL, URL = EntityType.ID, EntityType.PHONE, EntityType.EMAIL, EntityType.URL
MRN, ORDER, DATE = EntityType.MRN, EntityType.ORDER_ID, EntityType.DATE
HOSPITAL, ADDRESS, ORG = EntityType.HOSPITAL, EntityType.ADDRESS, EntityType.ORG
NAME = EntityType.NAME

# row -> [(text, value that must be masked, its type)]
MATRIX: dict[str, list[tuple[str, str, EntityType]]] = {
    "government ID, mainland": [
        ("身份证号11010519491231002X，请核对", "11010519491231002X", ID),
        ("证件 110105 19491231 002X", "110105 19491231 002X", ID),
        ("旧证130503670401001还能用吗", "130503670401001", ID),
    ],
    "government ID, Hong Kong": [
        ("香港身份證 A123456(3)", "A123456(3)", ID),
        ("HKID: A123456（3）", "A123456（3）", ID),
        ("身份证号码：A1234563", "A1234563", ID),
    ],
    "government ID, Taiwan": [
        ("身分證字號A123456789", "A123456789", ID),
        ("身分證字號 F223456780", "F223456780", ID),
        ("台湾身份证 A123456789 已上传", "A123456789", ID),
    ],
    "government ID, Macau": [
        ("澳門身份證 1234567(8)", "1234567(8)", ID),
        ("澳门身份证号码是1234567（8）", "1234567（8）", ID),
    ],
    "passports and travel permits": [
        ("护照号码：E12345678", "E12345678", ID),
        ("新版护照EA1234567", "EA1234567", ID),
        ("往来港澳通行证C12345678", "C12345678", ID),
        ("回鄉證 H1234567801", "H1234567801", ID),
        ("台胞证 12345678，麻烦登记", "12345678", ID),
        ("護照號碼：K12345678", "K12345678", ID),
    ],
    "telephone numbers": [
        ("手机13812345678", "13812345678", PHONE),
        ("座机 0571-87654321", "0571-87654321", PHONE),
        ("香港電話 +852 9123 4567", "+852 9123 4567", PHONE),
        ("台灣手機 0912-345-678", "0912-345-678", PHONE),
        ("電話是 9123 4567", "9123 4567", PHONE),
        ("他的手提電話 6123 4567", "6123 4567", PHONE),
    ],
    "fax numbers": [
        ("传真：87654321", "87654321", PHONE),
        ("傳真 (02) 2345 6789", "(02) 2345 6789", PHONE),
        ("fax 0571-8765 4321", "0571-8765 4321", PHONE),
        ("FAX: (852) 2345 6789", "(852) 2345 6789", PHONE),
    ],
    "e-mail addresses": [
        ("邮箱 zhang.san@163.com", "zhang.san@163.com", EMAIL),
        ("zhang.san [at] gmail [dot] com", "zhang.san [at] gmail [dot] com", EMAIL),
        ("发到wang艾特qq点com", "wang艾特qq点com", EMAIL),
        ("郵箱abc#163.com", "abc#163.com", EMAIL),
        ("lily at outlook dot com", "lily at outlook dot com", EMAIL),
    ],
    "URLs": [
        ("结果在dwz.cn/z12Y8，需要登录", "dwz.cn/z12Y8", URL),
        ("网址 https://example.com/r?id=9", "https://example.com/r?id=9", URL),
        ("看www.abc.hk", "www.abc.hk", URL),
    ],
    "IP addresses": [
        ("服务器IP是192.168.1.23:8080", "192.168.1.23:8080", URL),
        ("登录地址 10.0.0.8", "10.0.0.8", URL),
        ("IPv6 fe80::1ff:fe23:4567:890a", "fe80::1ff:fe23:4567:890a", URL),
        ("2001:db8:85a3::8a2e:370:7334 访问的", "2001:db8:85a3::8a2e:370:7334", URL),
    ],
    "social-media accounts and handles": [
        ("微信号：wx_liuyang88", "wx_liuyang88", ID),
        ("加我QQ 123456789", "123456789", ID),
        ("小红书号 9876543210", "9876543210", ID),
        ("微博：@dr_wang123", "@dr_wang123", ID),
        ("抖音號 doctor.li2020", "doctor.li2020", ID),
        ("IG: lily.chen88", "lily.chen88", ID),
        ("微博id：user_62839", "user_62839", ID),
    ],
    "bank card numbers": [
        ("卡号6222 0212 3456 7890 128", "6222 0212 3456 7890 128", ID),
        ("退费请打到这张卡 6222 6001 2345 6789", "6222 6001 2345 6789", ID),
        ("收款账户：6214 8301 2345 6789", "6214 8301 2345 6789", ID),
        ("退款到 4111 1111 1111 1111", "4111 1111 1111 1111", ID),
        ("工资卡 6217-0000-1234-5678-901", "6217-0000-1234-5678-901", ID),
        ("銀行卡號：622202 1234567890128", "622202 1234567890128", ID),
    ],
    "social and medical insurance cards": [
        ("社保卡号 3301 0219 8803", "3301 0219 8803", MRN),
        ("新农合卡号5383250482", "5383250482", MRN),
        ("醫保卡號 M620742873", "M620742873", MRN),
    ],
    "names in Latin letters": [
        # greeted, titled or speaking with no cue before; an honorific and degrees belong to it
        ("Olivia Brennan您好，结果已经出来了", "Olivia Brennan", NAME),
        ("Dr. Hannah Voss说不用住院", "Dr. Hannah Voss", NAME),
        ("复诊时找Marcus Hale MD看", "Marcus Hale MD", NAME),
        ("我叫Ethan Cole PhD，失眠两周", "Ethan Cole PhD", NAME),
        ("患者Mrs. Lena Hart，女，60岁", "Mrs. Lena Hart", NAME),
        ("Nora Quinn医生让我复查", "Nora Quinn", NAME),
        ("Owen McCarthy Jr.表示不想手术", "Owen McCarthy Jr.", NAME),
        ("Dear Iris Calloway，报告已经出来了", "Iris Calloway", NAME),
        ("亲爱的Felix Grant，复查时间到了", "Felix Grant", NAME),
    ],
    "employers and schools": [
        # after a label the name starts at the label, a function character first or not
        ("工作单位：和美印刷有限公司", "和美印刷有限公司", ORG),
        # a workplace frame around a name that holds 上 or 下, or runs long
        ("我在上海港务局上班，天天倒班", "上海港务局", ORG),
        ("孩子在下沙高新实验读书", "下沙高新实验", ORG),
        ("我在南京市鼓楼区城建开发上班", "南京市鼓楼区城建开发", ORG),
        # no legal suffix, a function character inside a word of the name (本, 进, 国家)
        ("我在本溪机床上班", "本溪机床", ORG),
        ("孩子他爸在华东纺织进出口工作", "华东纺织进出口", ORG),
        ("我在国家电网工作", "国家电网", ORG),
        # a name opening with a function character, bounded by the frame and its suffix
        ("我在和润信息有限公司上班", "和润信息有限公司", ORG),
        # a bracketed short or English name, inside a frame or before the suffix
        ("我在恒泰（HENGTAI）上班", "恒泰（HENGTAI）", ORG),
        ("工作单位：瑞和医材（和康）股份有限公司", "瑞和医材（和康）股份有限公司", ORG),
        # a brand in Latin letters with an apostrophe or a number, a studio, traditional words
        ("我在Lumi'Glow上班", "Lumi'Glow", ORG),
        ("老婆在9-Mart工作", "9-Mart", ORG),
        ("我在青禾工作室上班", "青禾工作室", ORG),
        ("工作单位：林森聯合會計師事務所", "林森聯合會計師事務所", ORG),
        # a university's college or department
        ("工作单位：江城大学明德学院", "江城大学明德学院", ORG),
        ("孩子在南湖大学化学系读书", "南湖大学化学系", ORG),
    ],
    "vehicle plates": [
        ("车停在京A12345旁边", "京A12345", ID),
        ("粵B·D12345", "粵B·D12345", ID),
        ("粤Z·1234港", "粤Z·1234港", ID),
        ("车牌号为苏E-12345的车", "苏E-12345", ID),
        ("香港車牌 AB 1234", "AB 1234", ID),
        ("澳門車牌MX-12-34", "MX-12-34", ID),
        ("台灣車牌：ABC-1234", "ABC-1234", ID),
    ],
    "device identifiers and serial numbers": [
        ("血糖仪序列号：SN20231234AB", "SN20231234AB", ID),
        ("IMEI 356938035643809", "356938035643809", ID),
        ("MAC地址 00:1A:2B:3C:4D:5E", "00:1A:2B:3C:4D:5E", ID),
        ("手机IMEI：86 123456 789012 3", "86 123456 789012 3", ID),
        ("機身號碼：F2LXK0ABHG7F", "F2LXK0ABHG7F", ID),
    ],
    "licence and certificate numbers": [
        ("医师执业证书编号110420000012345", "110420000012345", ID),
        ("驾驶证号 3301 0619 8501 0112", "3301 0619 8501 0112", ID),
        ("執業證書號碼：A2019-0042", "A2019-0042", ID),
        ("工号 HZ20391", "HZ20391", ID),
        ("营业执照注册号 91330100MA2B3C4D5E", "91330100MA2B3C4D5E", ID),
    ],
    "medical-record numbers": [
        ("住院号：ZY20230512", "ZY20230512", MRN),
        ("病歷號 88345120", "88345120", MRN),
        ("就诊卡号4628818469", "4628818469", MRN),
    ],
    "order and transaction numbers": [
        ("订单号 202305121234567890", "202305121234567890", ORDER),
        ("訂單號：JD20230512001", "JD20230512001", ORDER),
    ],
    "any other unique number": [
        ("编码 8823 不是，这个是 3847562910384756", "3847562910384756", ORDER),
        ("会员 998877665544332", "998877665544332", ORDER),
    ],
    "dates, full": [
        ("我是2023-10-11做的胃镜", "2023-10-11", DATE),
        ("25.7.20之前再来复诊", "25.7.20", DATE),
        ("出生日期87.5.7", "87.5.7", DATE),
        ("2010年九月八號出生", "2010年九月八號", DATE),
        ("23/3/15复查", "23/3/15", DATE),
        ("出生日期：民國85年3月15日", "民國85年3月15日", DATE),
        ("就診日期 112/03/15", "112/03/15", DATE),
    ],
    "dates, month and day or year and month": [
        ("3.15复查", "3.15", DATE),
        ("于3/15住院", "3/15", DATE),
        ("3-15号那天", "3-15号", DATE),
        ("3·15那天", "3·15", DATE),
        ("3月15号来的", "3月15号", DATE),
        ("三月十五號複診", "三月十五號", DATE),
        ("23年3月开始", "23年3月", DATE),
        ("二〇二三年三月做的手术", "二〇二三年三月", DATE),
    ],
    "addresses below city level": [
        ("住人民南路四段27号", "人民南路四段27号", ADDRESS),
        # the city heads a road and number: masked with it, a blank between or not
        ("住址：宜蘭市中山路二段58號3樓", "宜蘭市中山路二段58號3樓", ADDRESS),
        ("寄到柳州市 五一路312号", "柳州市 五一路312号", ADDRESS),
        ("寄到新店民權路41號之2", "新店民權路41號之2", ADDRESS),  # Taiwan's 號之2
        ("阳光花园3栋2单元501", "阳光花园3栋2单元501", ADDRESS),
        ("家在翠苑12幢3单元402室", "翠苑12幢3单元402室", ADDRESS),
        ("台北市大安區忠孝東路四段100巷5弄3號", "大安區忠孝東路四段100巷5弄3號", ADDRESS),
        ("住彌敦道123號", "彌敦道123號", ADDRESS),
        ("我住在万科城3期7栋", "万科城3期7栋", ADDRESS),
        ("我住汇景新城", "汇景新城", ADDRESS),
        ("在大学城北路东段88号", "大学城北路东段88号", ADDRESS),
        ("我老家是碑林区南院门街道竹笆市68号的", "碑林区南院门街道竹笆市68号", ADDRESS),
        ("地址：朝阳区建国路88号", "朝阳区建国路88号", ADDRESS),
        ("住址：隆回县北塘镇陈家村六组", "隆回县北塘镇陈家村六组", ADDRESS),
        # a numbered lane (…三条) after its city, a blank between
        ("寄到德州市 北新仓三条45号", "德州市 北新仓三条45号", ADDRESS),
        # a city or county, a district without its 区, a road and a building letter
        ("收货地址：彭市 城南 和平街D座", "彭市 城南 和平街D座", ADDRESS),
        ("药寄到鹤山县金湾临江路K座", "鹤山县金湾临江路K座", ADDRESS),
        # after a word for where someone lives, no number, or no road either
        ("家庭住址：云和县城西 新桥路", "云和县城西 新桥路", ADDRESS),
        ("我住在安吉县递铺，离医院远吗", "安吉县递铺", ADDRESS),
    ],
    "hospitals by full name": [
        ("在浙江大学医学院附属第一医院做的", "浙江大学医学院附属第一医院", HOSPITAL),
        ("城关镇卫生院开的药", "城关镇卫生院", HOSPITAL),
        ("李家村卫生室打的针", "李家村卫生室", HOSPITAL),
        ("台大醫院看過", "台大醫院", HOSPITAL),
        ("湖滨街道社区卫生服务中心", "湖滨街道社区卫生服务中心", HOSPITAL),
        ("在省人民医院看的", "省人民医院", HOSPITAL),
        ("在省立医院看的", "省立医院", HOSPITAL),
        ("澳門鏡湖醫院", "澳門鏡湖醫院", HOSPITAL),
    ],
    "hospitals by short or colloquial name": [
        ("在市一院做的手术", "市一院", HOSPITAL),
        ("去省二院复查", "省二院", HOSPITAL),
        ("之前在浙二排了", "浙二", HOSPITAL),
        ("找省妇幼排了", "省妇幼", HOSPITAL),
        ("301的医生说没事", "301", HOSPITAL),
        ("有，天坛的心内科也说要手术", "天坛", HOSPITAL),
        ("去湘雅二院看", "湘雅二院", HOSPITAL),
        ("爱尔眼科朝阳店做的检查", "爱尔眼科朝阳店", HOSPITAL),
        ("在北榮看診", "北榮", HOSPITAL),
        ("去馬偕看了", "馬偕", HOSPITAL),
        ("去附二院复查", "附二院", HOSPITAL),
        ("在上海九院整形", "上海九院", HOSPITAL),
    ],
}

# Texts in which nothing may be masked: product codes, clinical values, times, ages, places.
KEPT: dict[str, list[str]] = {
    "drug approval and device registration numbers": [
        "国药准字H20003263",
        "國藥準字Z20043093",
        "国械注准20153221234",
        "批准文号：H20059876",
    ],
    "device model and batch numbers": [
        "血糖仪型号：GT-1980",
        "型號 YE-680A",
        "批号20230512001234",
        "LOT 2305120012",
    ],
    "drug and brand names, dialect pronouns, insurance words": [
        "胃胀吃斯达舒管用吗",
        "孩子在吃钙尔奇，还要补别的吗",
        "苯磺酸氨氯地平一天一片",
        "家里用欧姆龙HEM-7136测的血压",
        "俺娘腿疼好几年了，新农合能报多少",
    ],
    "lab values, doses, ratios and ranges": [
        "血糖控制在6.5以下，降到3.15",
        "目标LDL-C低于2.6mmol/L，血糖降到6.5以后再减量",
        "血钾3.15mmol/L，血压150/95mmHg",
        "阿莫西林0.5g，1-2周后复查",
        "IgG 12.5 g/L，TG 3.56",
        "体温38.5℃，心率98次/分",
    ],
    "clock times and relative dates": [
        "早上7:30以后在家",
        "下午两点半吃药",
        "三个月前开始，上周复查",
        "3月份开始出疹子",
        "病历第112.3.5条，版本112.3.5",
        "确诊10年3月余，每月15号打一针",
    ],
    "places, products, eponyms and abbreviations in Latin letters": [
        "去了Hong Kong以后一直咳嗽",
        "Hong Kong医生说没事",
        "在New York读书，最近失眠",
        "Apple Watch说我心率有点快",
        "孩子确诊Down综合征",
        "我爸有Parkinson病，手一直抖",
        "做了CT和MRI，HbA1c是7.2",
        "Mobitz Type II型房室传导阻滞",
        "Hello Kitty你好，Good Morning您好",
    ],
    "ages, cities and provinces": [
        "男，45岁，杭州人",
        "在上海工作，老家广东",
        "去北京看病",
        "去县中医看看",
        "省内大医院都看过，在本县人民医院住过",
        "我回老家县医院看了",
        "孩子住在幼儿园，我住院了",
        "我在我们公司上班，一家（外资）公司",  # a pronoun, a kind in brackets
        "坐三条3号线就到",  # a count of lines, not a numbered lane
        "去了超市，中山路那边",
        "我住在杭州市中心，家在成都市郊区。",  # a part of any city
    ],
}


@cache
def _rules() -> Registry:
    return rules_registry()


def _spans(text: str) -> list[Span]:
    return find_spans(text, _rules())


def _covered(spans: list[Span], start: int, end: int, kind: EntityType) -> bool:
    masked = set()
    for span in spans:
        if span.type is kind:
            masked.update(range(span.start, span.end))
    return all(i in masked for i in range(start, end))


@pytest.mark.parametrize("row", list(MATRIX))
def test_each_matrix_row_is_masked_with_its_type(row: str) -> None:
    for text, value, kind in MATRIX[row]:
        start = text.index(value)
        spans = _spans(text)
        assert _covered(spans, start, start + len(value), kind), (row, text, spans)


@pytest.mark.parametrize("row", list(KEPT))
def test_what_the_matrix_keeps_stays_unmasked(row: str) -> None:
    for text in KEPT[row]:
        assert _spans(text) == [], (row, text)


def test_each_written_forms_row_is_a_row_of_the_documented_matrix() -> None:
    """The round-3 rows (``testing.deid_written_forms``) each have their line in the matrix of
    docs/DEIDENTIFICATION.md, which names the test that holds them."""
    from pathlib import Path

    from medrealmm.testing.deid_written_forms import ROWS

    doc = (Path(__file__).parents[2] / "docs" / "DEIDENTIFICATION.md").read_text(encoding="utf-8")
    for row in ROWS:
        assert f'`test_deid_written_forms.py` "{row.name}"' in doc, row.name
