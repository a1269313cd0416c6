from __future__ import annotations

from datetime import datetime

import pytest
from pydantic import ValidationError

from medrealmm.schema import (
    CaseScore,
    Consultation,
    Criterion,
    CriterionKind,
    Event,
    ImageOrigin,
    ImageRef,
    Instance,
    MaxCharsRule,
    Modality,
    Rubric,
    Sender,
    Verdict,
    VerdictStatus,
)

T0 = datetime(2025, 1, 1, 9, 0)


def _event(sender: Sender, text: str = "你好", images: list[ImageRef] | None = None) -> Event:
    return Event(sender=sender, timestamp=T0, content=text, images=images or [])


def test_event_modalities_follow_content() -> None:
    img = ImageRef(path="a/1.png", origin=ImageOrigin.PATIENT)
    assert _event(Sender.PATIENT, "x", [img]).modalities == {Modality.TEXT, Modality.IMAGE}
    assert _event(Sender.PATIENT, "", [img]).modalities == {Modality.IMAGE}
    assert _event(Sender.PATIENT, "x").modalities == {Modality.TEXT}


@pytest.mark.parametrize("path", ["/etc/passwd", "../x.png", "a/../../x.png"])
def test_image_paths_must_stay_inside_dataset_root(path: str) -> None:
    with pytest.raises(ValidationError, match="relative"):
        ImageRef(path=path, origin=ImageOrigin.PATIENT)


def test_patient_medical_images_exclude_stickers_and_other_origins() -> None:
    refs = [
        ImageRef(path="1.png", origin=ImageOrigin.PATIENT),
        ImageRef(path="2.png", origin=ImageOrigin.PATIENT, kind="sticker"),
        ImageRef(path="3.png", origin=ImageOrigin.PLATFORM),
        ImageRef(path="4.png", origin=ImageOrigin.PHYSICIAN),
    ]
    c = Consultation(id="c", department="皮肤科", events=[_event(Sender.PATIENT, "x", refs)])
    assert [r.path for r in c.patient_medical_images] == ["1.png"]


@pytest.mark.parametrize("weight", [-20, -1, 1, 20])
def test_weights_in_bounds_accepted(weight: int) -> None:
    assert Criterion(id="c1", text="t", weight=weight).weight == weight


@pytest.mark.parametrize("weight", [0, 21, -21, 100])
def test_weights_out_of_bounds_rejected(weight: int) -> None:
    with pytest.raises(ValidationError, match="weight"):
        Criterion(id="c1", text="t", weight=weight)


def test_rule_criteria_need_rule_spec() -> None:
    with pytest.raises(ValidationError):
        Criterion(id="c", text="t", weight=-5, kind=CriterionKind.RULE)
    with pytest.raises(ValidationError):
        Criterion(id="c", text="t", weight=5, rule=MaxCharsRule(limit=10))
    rule = Criterion(
        id="c", text="t", weight=-5, kind="rule", rule={"type": "max_chars", "limit": 9}
    )
    assert isinstance(rule.rule, MaxCharsRule)


def test_rubric_ids_unique_and_positive_total() -> None:
    crit = [Criterion(id="a", text="t", weight=8), Criterion(id="b", text="t", weight=-5)]
    assert Rubric(instance_id="i", criteria=crit).positive_total == 8
    with pytest.raises(ValidationError, match="unique"):
        Rubric(instance_id="i", criteria=[crit[0], crit[0]])


def test_instance_context_must_end_on_patient_turn() -> None:
    ok = [_event(Sender.PATIENT), _event(Sender.PHYSICIAN), _event(Sender.PATIENT)]
    inst = Instance(
        id="i", consultation_id="c", department="d", t_star=2, context=ok, target_reply="y"
    )
    assert inst.turn_count == 3
    with pytest.raises(ValidationError, match="patient"):
        Instance(
            id="i", consultation_id="c", department="d", t_star=1, context=ok[:2], target_reply="y"
        )
    with pytest.raises(ValidationError, match="t_star"):
        Instance(
            id="i", consultation_id="c", department="d", t_star=0, context=ok, target_reply="y"
        )


def test_failed_verdicts_carry_no_value_and_incomplete_cases_no_score() -> None:
    Verdict(criterion_id="a", value=None, status=VerdictStatus.FAILED, error="bad json")
    with pytest.raises(ValidationError):
        Verdict(criterion_id="a", value=False, status=VerdictStatus.FAILED)
    with pytest.raises(ValidationError):
        Verdict(criterion_id="a", value=None)
    with pytest.raises(ValidationError):
        CaseScore(instance_id="i", model="m", score=0.0, complete=False)
    assert CaseScore(instance_id="i", model="m", score=None, complete=False).score is None
