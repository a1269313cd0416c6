"""A number split over two turns of one speaker is masked in both turns."""

from __future__ import annotations

import asyncio

from medrealmm.deid.consultation import deid_turns
from medrealmm.deid.spans import EntityType
from medrealmm.deid.split_numbers import split_numbers


def test_a_mobile_split_over_the_same_speakers_two_turns_is_masked_in_both() -> None:
    turns = ["我的手机号是139 0013", "好的，请说", "9000，白天打"]
    halves = split_numbers(turns, ["patient", "doctor", "patient"])
    assert [[(s.text, s.type) for s in h] for h in halves] == [
        [("139 0013", EntityType.PHONE)],
        [],
        [("9000", EntityType.PHONE)],
    ]


def test_a_resident_id_split_over_two_turns_is_masked_without_speakers() -> None:
    turns = ["身份证号440304198805", "123017"]
    outcome = asyncio.run(deid_turns(turns))
    assert outcome.masked == ["身份证号[ID]", "[ID]"]


def test_numbers_that_are_no_identifier_together_stay() -> None:
    assert split_numbers(["血压130", "85，心率72"]) == [[], []]
    # a whole number in each turn is each turn's own to mask, not one number
    assert split_numbers(["13900139000", "13800138000"]) == [[], []]
    # another speaker's turn does not continue the number
    assert split_numbers(["电话139 0013", "9000"], ["patient", "doctor"]) == [[], []]
