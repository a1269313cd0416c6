"""The candidate set T and the instance/target split (paper 3.2), as pure functions.

T holds every 0-based index t where e_t is a patient event and e_{t+1} a physician event,
so an instance x = C<=t always ends on the patient turn. When a physician sends several
messages in a row, only the patient event before the first of them is a candidate: the
later ones would cut the context on a physician message. Those consecutive messages form
one physician turn, and the target y is their text joined by newlines.
"""

from __future__ import annotations

from collections.abc import Sequence

from medrealmm.schema import Event, Sender


def candidate_turns(events: Sequence[Event]) -> list[int]:
    return [
        t
        for t in range(len(events) - 1)
        if events[t].sender is Sender.PATIENT and events[t + 1].sender is Sender.PHYSICIAN
    ]


def physician_turn_span(events: Sequence[Event], t: int) -> range:
    """Indices of the physician turn answering e_t: the run of physician events after t."""
    if not 0 <= t < len(events) - 1 or events[t + 1].sender is not Sender.PHYSICIAN:
        raise ValueError(f"event {t} is not followed by a physician response")
    end = t + 1
    while end < len(events) and events[end].sender is Sender.PHYSICIAN:
        end += 1
    return range(t + 1, end)


def target_reply(events: Sequence[Event], t: int) -> str:
    """y = c_{t+1}: the text of the physician turn that answers e_t."""
    span = physician_turn_span(events, t)
    return "\n".join(events[i].content.strip() for i in span if events[i].content.strip())


def history_up_to(events: Sequence[Event], t: int) -> list[Event]:
    """C<=t: what the Verifier and the evaluated models may see."""
    return list(events[: t + 1])


def patient_images_before(events: Sequence[Event], t: int) -> int:
    """Patient-uploaded medical images in C<=t (origin and kind from platform metadata)."""
    return sum(len(event.patient_medical_images) for event in events[: t + 1])
