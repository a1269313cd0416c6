from __future__ import annotations

import pytest

from medrealmm.deid.checksum import check_char, is_resident_id, is_resident_id15, is_resident_id18


def test_check_char_matches_gb11643_worked_example() -> None:
    # The standard's worked example: 11010519491231002X.
    assert check_char("11010519491231002") == "X"
    assert is_resident_id18("11010519491231002X")
    assert is_resident_id18("11010519491231002x")


@pytest.mark.parametrize(
    "value",
    [
        "110105194912310021",  # wrong check character
        "110105194913310029",  # month 13
        "010105194912310021",  # region cannot start with 0
        "11010519491231002",  # 17 digits
    ],
)
def test_invalid_18_digit_ids_are_rejected(value: str) -> None:
    assert not is_resident_id18(value)


def test_every_check_character_position_is_validated() -> None:
    first17 = "44010619850317123"
    good = first17 + check_char(first17)
    assert is_resident_id(good)
    for other in "0123456789X":
        if other != good[-1]:
            assert not is_resident_id(first17 + other)


def test_old_15_digit_form_needs_a_real_birth_date() -> None:
    assert is_resident_id15("110101850317123")
    assert not is_resident_id15("110101853217123")  # month 32
    assert not is_resident_id15("11010185031712")
