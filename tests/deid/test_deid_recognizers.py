from __future__ import annotations

import pytest

from medrealmm.deid.checksum import check_char
from medrealmm.deid.registry import default_registry
from medrealmm.deid.spans import EntityType
from medrealmm.deid.text import find_spans, mask_text

ID18 = "31010419681205107" + check_char("31010419681205107")


def found(recognizer: str, text: str) -> list[tuple[str, str]]:
    return [(s.type.value, s.text) for s in default_registry().get(recognizer).find(text)]


@pytest.mark.parametrize(
    ("recognizer", "text", "expected"),
    [
        ("resident_id", f"身份证号{ID18}，请核对", ("ID", ID18)),
        ("resident_id", "老身份证110101850317123还能用吗", ("ID", "110101850317123")),
        ("phone_any_shape", "我电话是13812345678，谢谢", ("PHONE", "13812345678")),
        ("phone_any_shape", "打+86 138-1234-5678找我", ("PHONE", "+86 138-1234-5678")),
        ("landline_phone", "座机010-88886666转总机", ("PHONE", "010-88886666")),
        ("landline_phone", "客服400-123-4567", ("PHONE", "400-123-4567")),
        ("phone_by_context", "联系电话：0571 8765432", ("PHONE", "0571 8765432")),
        ("email", "发到zhang.li+a@mail.example.com吧", ("EMAIL", "zhang.li+a@mail.example.com")),
        (
            "url",
            "链接https://h.example.cn/r/12?id=3，看下",
            ("URL", "https://h.example.cn/r/12?id=3"),
        ),
        ("url", "上www.example.org/report查", ("URL", "www.example.org/report")),
        ("number_by_keyword", "订单号：A1234567，没收到", ("ORDER_ID", "A1234567")),
        ("number_by_keyword", "住院号 ZY20250112 出院", ("MRN", "ZY20250112")),
        ("number_by_keyword", "医保卡号12345678901", ("MRN", "12345678901")),
        ("prefixed_number", "病例MR202506123456", ("MRN", "MR202506123456")),
        ("prefixed_number", "单号JD2025061212345678", ("ORDER_ID", "JD2025061212345678")),
        ("long_number", "流水 6222020200112233445 已付", ("ORDER_ID", "6222020200112233445")),
        ("full_date", "2025年6月3日做的检查", ("DATE", "2025年6月3日")),
        ("full_date", "复查时间2025-06-03 10:30", ("DATE", "2025-06-03 10:30")),
        ("full_date_chinese_numerals", "二〇二五年六月三日", ("DATE", "二〇二五年六月三日")),
        ("hospital", "之前在江州市第一人民医院看过", ("HOSPITAL", "江州市第一人民医院")),
        ("hospital", "去了东湖社区卫生服务中心", ("HOSPITAL", "东湖社区卫生服务中心")),
        ("hospital", "在仁和皮肤专科诊所开的药", ("HOSPITAL", "仁和皮肤专科诊所")),
        ("address", "我住在朝阳区建国路12号", ("ADDRESS", "朝阳区建国路12号")),
        ("address", "家在阳光小区3栋2单元501室", ("ADDRESS", "阳光小区3栋2单元501室")),
        ("address", "中关村街道人民路8号", ("ADDRESS", "中关村街道人民路8号")),
        ("name_context", "我叫朱秀英，脚痒", ("NAME", "朱秀英")),
        ("name_context", "李建华主任开的药", ("NAME", "李建华")),
        ("name_context", "张医生说是湿疹", ("NAME", "张")),
        ("name_context", "我叫张伟今年30岁", ("NAME", "张伟")),
        ("name_jieba_nr", "昨天赵海燕说孩子咳嗽", ("NAME", "赵海燕")),
        ("name_jieba_nr", "我妈妈王桂兰也有高血压", ("NAME", "王桂兰")),
    ],
)
def test_each_recognizer_finds_its_identifier(
    recognizer: str, text: str, expected: tuple[str, str]
) -> None:
    assert expected in found(recognizer, text)


@pytest.mark.parametrize(
    "text",
    [
        "咳嗽3天，体温最高38.5℃，空腹血糖7.8mmol/L，糖化血红蛋白7.2%。",
        "奥美拉唑20mg bid，阿莫西林1.0g bid，连续14天，1-2周后复查。",
        "男，45岁，血压150/95mmHg，心率98次/分，尿比重1.025。",
        "去当地医院和三甲医院都看过，建议去正规医院皮肤科。",
        "两周前开始皮疹，高热3天，谢谢医生！明白了。",
        "尿路感染，多走路，心前区疼痛，上腹部不适，病区护士。",
        "继续涂1-2周再停，如果4周无改善，戴手套做家务，尿微量白蛋白。",
        "处方为艾司西酞普兰，坦索罗辛促排石，生地、麦冬滋阴。",
        # a year alone and a relative date stay; a month and day (6月3日) is a date element
        "2025年复查一次，下个月开始吃药，3个月后复查。",
    ],
)
def test_clinical_text_is_left_alone(text: str) -> None:
    assert find_spans(text) == []


def test_a_wrong_checksum_is_not_an_id() -> None:
    bad = ID18[:-1] + ("0" if ID18[-1] != "0" else "1")
    assert found("resident_id", f"号码{bad}") == []


def test_registry_holds_one_recognizer_per_identifier_family() -> None:
    names = set(default_registry().names)
    assert {"resident_id", "phone_any_shape", "email", "url", "hospital", "address"} <= names
    assert {"name_context", "name_jieba_nr", "full_date", "number_by_keyword"} <= names


def test_placeholders_are_typed_and_clinical_values_survive() -> None:
    text = (
        f"我叫朱秀英，45岁，身份证{ID18}，电话13812345678，"
        "2025年6月3日在江州市中心医院查空腹血糖7.8mmol/L。"
    )
    masked, spans = mask_text(text)
    assert (
        masked
        == "我叫[NAME]，45岁，身份证[ID]，电话[PHONE]，[DATE]在[HOSPITAL]查空腹血糖7.8mmol/L。"
    )
    assert [s.type for s in spans] == [
        EntityType.NAME,
        EntityType.ID,
        EntityType.PHONE,
        EntityType.DATE,
        EntityType.HOSPITAL,
    ]
    assert all(text[s.start : s.end] == s.text for s in spans)


def test_registry_is_a_fresh_object_built_from_one_list() -> None:
    first, second = default_registry(), default_registry()
    assert first is not second and first.names == second.names
    with pytest.raises(ValueError, match="twice"):
        first.add(first.get("email"))
    assert "email" not in first.without("email").names


def test_recognizer_modules_do_not_import_the_registry_or_demo() -> None:
    import subprocess
    import sys

    every_module = (
        "import importlib, pkgutil, sys, medrealmm.deid.recognizers as package;"
        "[importlib.import_module(f'{package.__name__}.{m.name}')"
        " for m in pkgutil.iter_modules(package.__path__)];"
    )
    code = (
        every_module + "import medrealmm.deid.names, medrealmm.deid.text;"
        "bad = [m for m in sys.modules if m.startswith('medrealmm.demo')];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    code = (
        every_module + "import medrealmm.deid.names;"
        "assert 'medrealmm.deid.registry' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
