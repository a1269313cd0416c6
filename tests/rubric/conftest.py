from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from medrealmm.io import iter_jsonl
from medrealmm.schema import Consultation, Event, Instance, Sender

T0 = datetime(2025, 6, 1, 9, 0)


def cut_at_longest_reply(consultation: Consultation) -> Instance:
    """A stand-in for the MCCP stage: x ends on the patient turn before the longest reply."""
    events = consultation.events
    candidates = [
        i
        for i in range(1, len(events))
        if events[i].sender is Sender.PHYSICIAN and events[i - 1].sender is Sender.PATIENT
    ]
    target = max(candidates, key=lambda i: len(events[i].content))
    return Instance(
        id=f"{consultation.id}@{target - 1}",
        consultation_id=consultation.id,
        department=consultation.department,
        subspecialty=consultation.subspecialty,
        t_star=target - 1,
        context=events[:target],
        target_reply=events[target].content,
    )


@pytest.fixture()
def demo_instances(demo_dir: Path) -> list[Instance]:
    truth = json.loads((demo_dir / "truth.json").read_text(encoding="utf-8"))
    return [
        cut_at_longest_reply(c)
        for c in iter_jsonl(demo_dir / "consultations.jsonl", Consultation)
        if truth[c.id]["expected_drop"] is None
    ]


TINEA_REPLY = (
    "考虑足癣（浸渍糜烂型）可能性大。建议外用联苯苄唑乳膏，每日一次，连续使用4周，"
    "症状消失后再巩固1-2周；保持足部干燥，袜子每天更换并烫洗，家人同时治疗，避免共用拖鞋。"
    "如出现红肿热痛或流脓需线下就诊。"
)


@pytest.fixture()
def tinea_instance() -> Instance:
    """The appendix 6.5 case: tinea pedis."""
    return Instance(
        id="tinea@4",
        consultation_id="tinea",
        department="皮肤科",
        subspecialty="皮肤真菌病",
        t_star=2,
        context=[
            Event(sender=Sender.PATIENT, timestamp=T0, content="我脚趾缝又痒又脱皮，两周了。"),
            Event(sender=Sender.PHYSICIAN, timestamp=T0, content="有没有渗液？以前得过脚气吗？"),
            Event(sender=Sender.PATIENT, timestamp=T0, content="有点渗液，去年也这样过。"),
        ],
        target_reply=TINEA_REPLY,
    )
