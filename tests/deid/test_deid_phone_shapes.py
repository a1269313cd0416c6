"""Phones in the layouts people type them (prefixes, brackets, any grouping, extensions),
decided by their digits; lists of values with the same separators stay. Numbers are made up
here."""

from __future__ import annotations

import pytest

from medrealmm.deid.recognizers.phones import phone_digits
from medrealmm.deid.registry import rules_registry
from medrealmm.deid.spans import EntityType
from medrealmm.deid.text import find_spans


def _masked(text: str) -> dict[str, EntityType]:
    return {s.text: s.type for s in find_spans(text, rules_registry())}


@pytest.mark.parametrize(
    ("text", "phone"),
    [
        ("加我(+86)15800001111", "(+86)15800001111"),
        ("座机（0571）8765 4321 转 66", "（0571）8765 4321 转 66"),
        ("前台(020)8765-4321-805", "(020)8765-4321-805"),
        ("号码0571-8765-4321", "0571-8765-4321"),
        ("打 020 8765 4321 就行", "020 8765 4321"),
        ("客服400 6123 456", "400 6123 456"),
        ("我的是158.0000.1111", "158.0000.1111"),
        ("1580-000-1111 随时打", "1580-000-1111"),
        ("158~0000~1111", "158~0000~1111"),
        ("(0571) 8765 4321 3天后复诊", "(0571) 8765 4321"),
        ("0571 8765 4321 ext. 8", "0571 8765 4321 ext. 8"),
        ("电话158[微笑]0000[微笑]1111", "158[微笑]0000[微笑]1111"),  # chat noise between groups
        ("158👉0000👉1111", "158👉0000👉1111"),
        ("号码 158 | 0000 | 1111", "158 | 0000 | 1111"),
        ("电话+86 571 8765 4321", "+86 571 8765 4321"),  # no trunk 0 after the country code
        ("+86 (0)571 8765 4321", "+86 (0)571 8765 4321"),
        ("+86-10-8765 4321", "+86-10-8765 4321"),
        ("0571-87654321 分机号 123", "0571-87654321 分机号 123"),
        ("Tel.15800001111", "15800001111"),
        ("加我一五八〇〇〇〇一一一一", "一五八〇〇〇〇一一一一"),  # written in Chinese numerals
        ("电话幺五八 零零零零 幺幺幺幺", "幺五八 零零零零 幺幺幺幺"),
        ("手机 158 0000\n1111", "158 0000\n1111"),  # a chat line break inside
        ("有事打6234 5678找我", "6234 5678"),  # a local number after a call verb
        ("请拨打8765-4321预约", "8765-4321"),
        ("可以致电 62345678", "62345678"),
        ("联系人张三13800138000", "13800138000"),  # a numeral name right before the digits
        ("第四18612345678", "18612345678"),
        ("13800138000三天后复诊", "13800138000"),
        ("手机139一2345一6789", "139一2345一6789"),  # 一 typed for a dash
        ("电话 1 3 8 0 0 1 3 8 0 0 0", "1 3 8 0 0 1 3 8 0 0 0"),  # spelled digit by digit
        ("香港电话+852 9123 4567", "+852 9123 4567"),  # numbers abroad
        ("美国号码 +1 (415) 555-2671", "+1 (415) 555-2671"),
        ("0044 20 7946 0958", "0044 20 7946 0958"),
        ("号码 +1-483-651-0349", "+1-483-651-0349"),  # possible in length, area not in service
        ("美国的 +1 206.269.0743 x915", "+1 206.269.0743 x915"),
        ("电话+86 231-10360633", "+86 231-10360633"),  # +86, whatever the area code
        ("家里0103914177没人接", "0103914177"),  # a real area code, a mistyped local length
        ("座机0931-12345678转分机3172", "0931-12345678转分机3172"),
        ("前台 0512-5374962分机号 35", "0512-5374962分机号 35"),
    ],
)
def test_phones_in_any_layout(text: str, phone: str) -> None:
    assert _masked(text).get(phone) is EntityType.PHONE


@pytest.mark.parametrize(
    ("text", "phone"),
    [
        ("台湾的电话是:09-70404796,谢谢", "09-70404796"),
        ("手机号：0915-000806", "0915-000806"),
        ("【联系电话】(07) 40669074", "(07) 40669074"),
        ("Tel. 841.667.2110", "841.667.2110"),
        ("总机是(831)763-7425x12吧", "(831)763-7425x12"),
        ("有事打+1-537-640-6812", "+1-537-640-6812"),
        ("拨打 0948-304011 找我", "0948-304011"),
    ],
)
def test_numbers_in_any_national_layout_after_a_phone_word(text: str, phone: str) -> None:
    """Abroad, or in a layout no Chinese number has, a number is still one when the text
    says so."""
    assert _masked(text).get(phone) is EntityType.PHONE


@pytest.mark.parametrize(
    ("text", "phone"),
    [
        ("我在美国，412-215-4728 晚上能接", "412-215-4728"),
        ("回国前留个 (904)300-0883x873 吧", "(904)300-0883x873"),
        ("号在这 962.952.7601 ext 55", "962.952.7601 ext 55"),
        ("从国内打 001-433-777-6174x0931", "001-433-777-6174x0931"),
        ("台北家里 (02) 5768 4268，白天没人", "(02) 5768 4268"),
        ("我妈的 03-8194875", "03-8194875"),
        ("她是台湾的，0921-993518", "0921-993518"),
        ("或者 0912 345 678 也行", "0912 345 678"),
        ("我的号码是412-215-4728谢谢", "412-215-4728"),  # Han text touches it
        ("在美国的家里4674924708", "4674924708"),  # ten digits in one run
        ("台湾手机0960313721", "0960313721"),
    ],
)
def test_numbers_in_a_layout_of_north_america_or_taiwan_need_no_cue(text: str, phone: str) -> None:
    assert _masked(text).get(phone) is EntityType.PHONE


@pytest.mark.parametrize(
    "text",
    [
        "输液 200 250 1000 ml 分三次",  # 3-3-4 in spaces: a list of volumes
        "剂量 250-500-1000 mg 递增",  # a dose escalation
        "剂量 250.500.1000 IU",
        "血压 120-80-60",
        "2023-05-12 复查 0.05 1234567",
        "化验单号 123-456-7890 见附件",  # no area code starts with 1
        "批号 A05-1234567",
        "时间戳 1700000000",  # a Unix time: no area code starts with 1
        "10:30 到 11:45 复查",
    ],
)
def test_values_in_foreign_phone_layouts_without_their_rules_stay(text: str) -> None:
    assert EntityType.PHONE not in _masked(text).values()


@pytest.mark.parametrize(
    ("text", "number", "kind"),
    [
        ("门诊号5945623644。", "5945623644", EntityType.MRN),
        ("订单号: 2934342422", "2934342422", EntityType.ORDER_ID),
    ],
)
def test_ten_digits_after_a_label_keep_the_labels_type(
    text: str, number: str, kind: EntityType
) -> None:
    assert _masked(text).get(number) is kind


@pytest.mark.parametrize("prefix", [f"0{i:02d}" for i in range(100)] + ["008", "0081", "00852"])
def test_no_area_code_candidate_breaks_the_phone_rules(prefix: str) -> None:
    """008 98842368 once raised from libphonenumber (00 opens a call abroad to no country)."""
    for local in ("98842368", "2345678"):
        _masked(f"昨天看了报告，{prefix} {local}，麻烦医生看看")


@pytest.mark.parametrize(
    "text",
    [
        "电话随访 2023.05.12 复查",  # a date after a phone word
        "电话里说 3 5 7 天各一次",
        "打 1000 单位胰岛素",
        "打了 12 12 10 单位",
        "号码 12 位",
        "病历号00123456789",  # 00 starts record numbers too: no number abroad unless valid
        # groups of any size follow only words that name a phone outright
        "号码是 5 10 15 20 25 mg",
        "请于3日前回电 2023-05-12",
        "Hotel 2 3 4 5 6 7 8",
    ],
)
def test_values_after_a_phone_word_are_not_phones(text: str) -> None:
    assert EntityType.PHONE not in _masked(text).values()


@pytest.mark.parametrize(
    "text",
    [
        "血常规 0.5 1.2 3.4 5.6 7.8 9.0",
        "血小板 150 230 180 20",
        "剂量 10-20-30 mg",
        "体重 65.5 kg 身高 170 cm",
        "血压130/85 心率 78",
        "我今年三十八岁，一天三次",
        "一二三四五六七八九十",
        "胰岛素早中晚打 12 12 10 单位",  # doses after 打 are no local number
        "打了1000单位的针",
        "血糖+1.2 mmol",  # signed values are no country codes
        "变化+12 3456 7890",
        "评分+3 +5 +7",
    ],
)
def test_values_with_phone_separators_are_not_phones(text: str) -> None:
    assert EntityType.PHONE not in _masked(text).values()


def test_phone_digits_drops_the_country_code() -> None:
    assert phone_digits("+86 158 0000 1111") == "15800001111"
    assert phone_digits("0086-0571-87654321") == "057187654321"
    assert phone_digits("0571 1234") is None


@pytest.mark.parametrize("phone", ["(0)10-8765 4321", "（0）571-87654321", "(0)755 8765 4321"])
def test_a_bracketed_trunk_zero_without_country_code_is_part_of_the_phone(phone: str) -> None:
    text = f"座机{phone}，工作日可打"
    (span,) = [s for s in find_spans(text) if s.type == EntityType.PHONE]
    assert span.text == phone


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("手机号码138****8000", "138****8000", EntityType.PHONE),
        ("身份证110101********123X", "110101********123X", EntityType.ID),
        ("尾号 320***********0012", "320***********0012", EntityType.ID),
    ],
)
def test_numbers_starred_in_part_are_masked_whole(text: str, value: str, kind: EntityType) -> None:
    assert _masked(text).get(value) is kind


def test_stars_between_values_are_no_number() -> None:
    assert not _masked("评分 3*** 5 ****")
