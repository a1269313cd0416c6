"""Each Φ rule pinned at its boundaries (appendix 6.1, stages 1, 2 and 4a)."""

from __future__ import annotations

import pytest

from medrealmm.corpus import (
    CompletenessConfig,
    DropReason,
    Operator,
    PrivacyConfig,
    completeness_filter,
    image_filter,
    privacy_rule,
)
from medrealmm.corpus.filters import is_substantive_reply
from medrealmm.schema import ImageKind, ImageOrigin, ImageRef

RULES = CompletenessConfig()


def _alternating(turns: int) -> str:
    return ("PD" * turns)[:turns]


@pytest.mark.parametrize(
    ("turns", "reason"),
    [
        (4, DropReason.TOO_FEW_TURNS),
        (5, None),  # 3 of 5 from the patient: alternating, kept
        (6, None),
        (30, None),
        (31, DropReason.TOO_MANY_TURNS),
        (32, DropReason.TOO_MANY_TURNS),
    ],
)
def test_turn_count_bounds_are_inclusive(make_case, turns: int, reason) -> None:
    drop = completeness_filter(make_case(_alternating(turns)), RULES)
    assert (drop.reason if drop else None) == reason


def test_five_turns_are_the_minimum(make_case) -> None:
    assert completeness_filter(make_case("PDPDP"), RULES) is None
    drop = completeness_filter(make_case("PDPD"), RULES)
    assert drop is not None and drop.reason is DropReason.TOO_FEW_TURNS
    assert drop.detail == "turns=4<5"


def test_length_limit_is_four_thousand_characters_inclusive(make_case) -> None:
    at_limit = ["字" * 1000] * 4
    assert completeness_filter(make_case("PDPD" + "PD", texts=[*at_limit, "", ""]), RULES) is None
    over = [*at_limit, "多", ""]
    drop = completeness_filter(make_case("PDPDPD", texts=over), RULES)
    assert drop is not None and drop.reason is DropReason.TOO_LONG
    assert drop.detail == "chars=4001>4000"


@pytest.mark.parametrize("turns", [5, 7, 9, 11, 29])
def test_odd_length_alternating_dialogues_are_kept(make_case, turns: int) -> None:
    assert completeness_filter(make_case(_alternating(turns)), RULES) is None
    assert completeness_filter(make_case(_alternating(turns)[::-1]), RULES) is None


@pytest.mark.parametrize(
    ("senders", "dropped"),
    [
        ("PDPDPD", False),  # exactly half from each side
        ("PPPDDD", False),
        ("PPPDPDPD", False),  # 5 of 8: 5/3 is within 2x
        ("PPDPPDPPD", False),  # 6 of 9: exactly twice the other side is kept
        ("PPPPDPDPPP", True),  # 8 of 10 from the patient
        ("DDDDDDDDPP", True),  # 8 of 10 from the physician
        ("PPPPPP", True),  # one side only
        ("PPPDPPPD", True),  # 6 of 8: 3x the other side
    ],
)
def test_a_dominant_side_is_dropped(make_case, senders: str, dropped: bool) -> None:
    drop = completeness_filter(make_case(senders), RULES)
    assert (drop is not None and drop.reason is DropReason.ONE_SIDED) is dropped


def test_side_ratio_is_configurable(make_case) -> None:
    strict = RULES.model_copy(update={"max_side_ratio": 1.0})
    drop = completeness_filter(make_case("PDPDPDP"), strict)
    assert drop is not None and drop.reason is DropReason.ONE_SIDED
    assert drop.detail == "patient=4/7"
    assert completeness_filter(make_case("PDPDPD"), strict) is None


REFUND_CLOSE = [
    "帮我看看化验单",
    "请稍等",
    "怎么还没回复",
    "马上",
    "算了不问了，申请退款",
    "好的，已退款",
]


def test_refund_close_without_diagnostic_exchange_is_dropped(make_case) -> None:
    drop = completeness_filter(make_case("PDPDPD", texts=REFUND_CLOSE), RULES)
    assert drop is not None and drop.reason is DropReason.REFUND_CLOSE
    assert drop.operator is Operator.COMPLETENESS


def test_refund_close_after_a_diagnostic_exchange_is_kept(make_case) -> None:
    texts = [*REFUND_CLOSE]
    texts[3] = "考虑甲亢可能，建议复查甲功"
    assert completeness_filter(make_case("PDPDPD", texts=texts), RULES) is None


def test_refund_words_early_in_the_dialogue_do_not_count(make_case) -> None:
    texts = ["上次退款了，这次重新问", "请说", "皮疹两周", "请发照片", "好的发了", "收到"]
    assert completeness_filter(make_case("PDPDPD", texts=texts), RULES) is None


def test_advice_to_contact_customer_service_is_not_a_diagnostic_reply(make_case) -> None:
    texts = ["看看疹子", "您好", "图片发不上来", "建议您联系客服申请退款", "那我退款吧", "好的"]
    drop = completeness_filter(make_case("PDPDPD", texts=texts), RULES)
    assert drop is not None and drop.reason is DropReason.REFUND_CLOSE


def test_refund_in_the_second_to_last_patient_message_closes(make_case) -> None:
    texts = ["帮我看看化验单", "稍等", "算了，申请退款", "您好，马上", "谢谢", "好的"]
    drop = completeness_filter(make_case("PDPDPD", texts=texts), RULES)
    assert drop is not None and drop.reason is DropReason.REFUND_CLOSE


def test_a_substantive_reply_without_diagnostic_keywords_keeps_the_case(make_case) -> None:
    texts = ["帮我看看化验单", "白细胞一万二，中性粒细胞比例高，细菌感染", "不问了，退款", "好的"]
    assert completeness_filter(make_case("PDPDP", texts=[*texts, "嗯"]), RULES) is None


@pytest.mark.parametrize(
    ("text", "substantive"),
    [
        ("您好，请稍等，马上", False),
        ("建议您联系客服申请退款", False),
        ("好的，已退款", False),
        ("考虑甲亢可能，建议复查甲功", True),
        ("湿疹，外用激素软膏一周", True),
    ],
)
def test_substantive_reply(text: str, substantive: bool) -> None:
    assert is_substantive_reply(text, RULES) is substantive


def test_first_applicable_reason_wins(make_case) -> None:
    drop = completeness_filter(make_case("PPP"), RULES)  # too few turns and one-sided
    assert drop is not None and drop.reason is DropReason.TOO_FEW_TURNS


def test_image_filter_needs_a_patient_medical_image(make_case) -> None:
    assert image_filter(make_case()) is None
    for origin, kind in [
        (ImageOrigin.PATIENT, ImageKind.STICKER),
        (ImageOrigin.PATIENT, ImageKind.EMOJI),
        (ImageOrigin.PHYSICIAN, ImageKind.MEDICAL),
        (ImageOrigin.PLATFORM, ImageKind.MEDICAL),
    ]:
        ref = ImageRef(path="images/x.png", origin=origin, kind=kind)
        drop = image_filter(make_case(image=ref))
        assert drop is not None and drop.reason is DropReason.NO_PATIENT_IMAGE, (origin, kind)
        assert drop.operator is Operator.IMAGE


def test_privacy_rule_drops_configured_categories_only(make_case) -> None:
    face = ImageRef(path="images/f.jpg", origin=ImageOrigin.PATIENT, category="face_photo")
    skin = ImageRef(path="images/s.jpg", origin=ImageOrigin.PATIENT, category="skin")
    drop = privacy_rule(make_case(image=face), PrivacyConfig())
    assert drop is not None and drop.reason is DropReason.FACE_DEPENDENT
    assert drop.detail == "rule: category=face_photo"
    assert privacy_rule(make_case(image=skin), PrivacyConfig()) is None
    assert privacy_rule(make_case(image=skin), PrivacyConfig(categories=["skin"])) is not None


def test_drop_details_hold_no_patient_text(make_case) -> None:
    texts = ["我叫张三电话13800000000", *["说明"] * 5]
    drop = completeness_filter(make_case("PPPPPD", texts=texts), RULES)
    assert drop is not None and "张三" not in drop.model_dump_json()
