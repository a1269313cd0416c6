from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

import pytest

from medrealmm.schema import Consultation, Event, ImageOrigin, ImageRef, Sender

CaseFactory = Callable[..., Consultation]


def build_case(
    senders: Sequence[str] = "PDPDPD",
    *,
    id: str = "c1",
    department: str = "皮肤科",
    texts: Sequence[str] | None = None,
    image: ImageRef | None = None,
    image_at: int = 0,
) -> Consultation:
    """``senders`` is a string of P/D; the patient's event ``image_at`` carries ``image``."""
    image = image or ImageRef(path=f"images/{id}/1.jpg", origin=ImageOrigin.PATIENT)
    start = datetime(2025, 6, 1, 9, 0)
    events = []
    for index, code in enumerate(senders):
        sender = Sender.PATIENT if code == "P" else Sender.PHYSICIAN
        text = texts[index] if texts is not None else f"第{index}句"
        images = [image] if index == image_at else []
        events.append(
            Event(
                sender=sender,
                timestamp=start + timedelta(minutes=index),
                content=text,
                images=images,
            )
        )
    return Consultation(id=id, department=department, events=events)


@pytest.fixture()
def make_case() -> CaseFactory:
    return build_case
