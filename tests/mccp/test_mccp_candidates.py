from __future__ import annotations

from collections.abc import Callable

import pytest

from medrealmm.mccp import candidate_turns, history_up_to, target_reply
from medrealmm.mccp.candidates import physician_turn_span
from medrealmm.schema import Consultation, Sender

P, D = Sender.PATIENT, Sender.PHYSICIAN
Factory = Callable[..., Consultation]


def test_candidates_are_patient_events_followed_by_a_physician(
    consultation: Callable[..., Consultation],
) -> None:
    case = consultation([(P, "a"), (D, "b"), (P, "c"), (P, "d"), (D, "e"), (P, "f")])
    assert candidate_turns(case.events) == [0, 3]


def test_consecutive_physician_messages_form_one_target_turn(
    consultation: Callable[..., Consultation],
) -> None:
    case = consultation([(P, "问"), (D, "第一句"), (D, "第二句"), (P, "谢谢")])
    # t=1 would end the context on a physician message, so only t=0 is a candidate ...
    assert candidate_turns(case.events) == [0]
    # ... and its target is the whole physician turn.
    assert physician_turn_span(case.events, 0) == range(1, 3)
    assert target_reply(case.events, 0) == "第一句\n第二句"


def test_target_needs_a_physician_reply(consultation: Factory) -> None:
    case = consultation([(P, "问"), (D, "答"), (P, "谢谢")])
    with pytest.raises(ValueError, match="not followed by a physician"):
        target_reply(case.events, 2)


def test_history_is_the_prefix_up_to_t(consultation: Factory) -> None:
    case = consultation([(P, "a"), (D, "b"), (P, "c"), (D, "d")])
    assert [e.content for e in history_up_to(case.events, 2)] == ["a", "b", "c"]


def test_consultation_opened_by_the_physician_has_no_candidate_before_it(
    consultation: Callable[..., Consultation],
) -> None:
    case = consultation([(D, "您好"), (P, "问"), (D, "答")])
    assert candidate_turns(case.events) == [1]
