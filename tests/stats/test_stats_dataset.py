"""Dataset statistics (paper 3.5 / Figure 3) shared by the report and the release card."""

from __future__ import annotations

from datetime import datetime

from medrealmm.schema import Criterion, Event, ImageOrigin, ImageRef, Instance, Rubric, Sender
from medrealmm.stats.dataset import dataset_statistics


def _instance(iid: str, turns: int, images: int, intent: str | None) -> Instance:
    refs = [
        ImageRef(path=f"images/{iid}/{n}.jpg", origin=ImageOrigin.PATIENT) for n in range(images)
    ]
    events = [
        Event(
            sender=Sender.PATIENT if t % 2 == 0 else Sender.PHYSICIAN,
            timestamp=datetime(2025, 6, 1, 9, t),
            content="内容",
            images=refs if t == 0 else [],
        )
        for t in range(turns)
    ]
    return Instance(
        id=iid,
        consultation_id=iid.split("-")[0],
        department="皮肤科",
        t_star=turns - 1,
        context=events,
        target_reply="回复",
        intent=intent,
        stage="diagnostic_reasoning",
    )


def _rubric(iid: str, weights: list[int]) -> Rubric:
    criteria = [Criterion(id=f"c{n}", text="要点", weight=w) for n, w in enumerate(weights)]
    return Rubric(instance_id=iid, criteria=criteria)


def test_statistics_cover_turns_images_rubric_sizes_and_labels_by_name() -> None:
    instances = [
        _instance("a-t2", 3, 1, "medication_guidance"),
        _instance("b-t4", 5, 3, "examination_interpretation"),
        _instance("c-t0", 1, 2, None),
    ]
    rubrics = {"a-t2": _rubric("a-t2", [5, 3, -4]), "b-t4": _rubric("b-t4", [8, -2, -6, -1])}
    stats = dataset_statistics(instances, rubrics)
    assert (stats["instances"], stats["consultations"], stats["with_rubric"]) == (3, 3, 2)
    by = {d["quantity"]: d for d in stats["distributions"]}
    assert (by["turns"]["min"], by["turns"]["max"], by["turns"]["mean"]) == (1, 5, 3.0)
    assert by["images"]["median"] == 2
    assert (by["criteria"]["n"], by["criteria"]["mean"]) == (2, 3.5)
    assert (by["positive"]["mean"], by["negative"]["mean"]) == (1.5, 2.0)
    intents = {r["label"]: r for r in stats["intents"]}
    assert intents["medication_guidance"]["name"] == "用药指导"
    assert intents["examination_interpretation"]["cases"] == 1
    assert intents["unlabelled"]["cases"] == 1
    assert all(r["name"] for r in stats["stages"])


def test_value_counts_give_every_value_between_min_and_max() -> None:
    from medrealmm.stats.dataset import value_counts

    instances = [_instance("a-1", 3, 1, None), _instance("b-1", 7, 3, None)]
    rubrics = {"a-1": _rubric("a-1", [5, -3]), "b-1": _rubric("b-1", [5, 4, 2, -1])}
    rows = value_counts(instances, rubrics)
    turns = {r["value"]: r["cases"] for r in rows if r["quantity"] == "turns"}
    assert turns == {3: 1, 4: 0, 5: 0, 6: 0, 7: 1}
    images = {r["value"]: r["cases"] for r in rows if r["quantity"] == "images"}
    assert images == {1: 1, 2: 0, 3: 1}
    criteria = {r["value"]: r["cases"] for r in rows if r["quantity"] == "criteria"}
    assert criteria == {2: 1, 3: 0, 4: 1}
    for quantity in ("turns", "images", "criteria", "positive", "negative"):
        assert sum(r["cases"] for r in rows if r["quantity"] == quantity) == 2
