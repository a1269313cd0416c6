"""A seeded synthetic run store with everything the report reads.

For tests and benchmarks of the statistics and the report, and for trying the report without
running the whole pipeline. The numbers are invented: never present them as results.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import BaseModel

from medrealmm.schema import (
    CaseScore,
    Criterion,
    Event,
    ImageOrigin,
    ImageRef,
    Instance,
    Response,
    Rubric,
    Sender,
    Verdict,
)
from medrealmm.stats.cases import ONLINE_MODEL, PRIMARY_GRADER_META
from medrealmm.stats.scoring import complete_rubric_score
from medrealmm.store import RunStore, stages

DEPARTMENTS = (
    ("皮肤科", "湿疹皮炎"),
    ("皮肤科", "皮肤真菌病"),
    ("内分泌科", "糖尿病"),
    ("中医科", "中医内科"),
)
INTENTS = ("症状咨询", "报告解读", "用药咨询")
STAGES = ("病史采集", "诊断解释", "治疗建议")
#: model -> (quality, has a text-only run, is the offline baseline)
MODELS = {
    "模型甲": (0.75, True, False),
    "model-b": (0.5, True, False),
    ONLINE_MODEL: (0.85, False, False),
    "offline-baseline": (0.3, False, True),
}
JUDGES = ("judge-a", "judge-b")
REVIEWERS = ("dr-1", "dr-2", "dr-3")
T0 = datetime(2025, 6, 1, 9, 0)


def make_instance(index: int, rng: random.Random) -> Instance:
    department, subspecialty = DEPARTMENTS[index % len(DEPARTMENTS)]
    turns = rng.choice((3, 5, 7, 9, 11, 13))
    images = 1 + index % 4
    events = []
    for t in range(turns):
        sender = Sender.PATIENT if t % 2 == 0 else Sender.PHYSICIAN
        refs = []
        if sender is Sender.PATIENT and t == 0:
            refs = [
                ImageRef(path=f"case-{index:03d}/{k}.jpg", origin=ImageOrigin.PATIENT)
                for k in range(images)
            ]
        events.append(
            Event(sender=sender, timestamp=T0 + timedelta(minutes=t), content="……", images=refs)
        )
    return Instance(
        id=f"case-{index:03d}",
        consultation_id=f"c-{index:03d}",
        department=department,
        subspecialty=subspecialty,
        t_star=turns - 1,
        context=events,
        target_reply="……",
        intent=INTENTS[index % len(INTENTS)],
        stage=STAGES[(index // 2) % len(STAGES)],
    )


def make_rubric(instance_id: str, rng: random.Random) -> Rubric:
    criteria = [
        Criterion(id=f"p{j}", text=f"要点{j}", weight=rng.randint(3, 10))
        for j in range(rng.randint(3, 5))
    ]
    criteria += [
        Criterion(id=f"n{j}", text=f"风险{j}", weight=-rng.randint(3, 10))
        for j in range(rng.randint(1, 2))
    ]
    return Rubric(instance_id=instance_id, criteria=criteria, approved=True)


def judge(rubric: Rubric, quality: float, rng: random.Random) -> dict[str, bool]:
    return {
        c.id: rng.random() < (quality if c.weight > 0 else (1 - quality) * 0.5)
        for c in rubric.criteria
    }


def noisy(truth: dict[str, bool], flip: float, rng: random.Random) -> dict[str, bool]:
    return {cid: (not v) if rng.random() < flip else v for cid, v in truth.items()}


def build_synthetic_store(
    path: Path | str, *, cases: int = 24, seed: int = 7, batch: int = 500
) -> Path:
    """Fill a run store at ``path``; the first grader is primary and one case is incomplete.

    Rows are written ``batch`` cases to a transaction (one commit a row made 16,000 cases a
    20-minute build); the rows and their order within each stage do not depend on ``batch``."""
    rng = random.Random(seed)
    with RunStore(path) as store:
        store.set_meta(PRIMARY_GRADER_META, JUDGES[0])
        rows: Rows = {}
        for index in range(cases):
            instance = make_instance(index, rng)
            rubric = make_rubric(instance.id, rng)
            rows.setdefault(stages.MCCP_INSTANCE, []).append((instance.id, instance))
            rows.setdefault(stages.RUBRIC_FINAL, []).append((instance.id, rubric))
            weights = {c.id: c.weight for c in rubric.criteria}
            for model, (quality, text_too, baseline) in MODELS.items():
                for images in (True, False) if text_too else (True,):
                    q = quality if images else quality * 0.6
                    put_response(rows, instance, rubric, weights, model, images, q, baseline, rng)
            if (index + 1) % batch == 0:
                _flush(store, rows)
        _flush(store, rows)
        scored = store.path
    return scored


#: rows waiting for their batch's transaction, by stage, in the order they were made
Rows = dict[str, list[tuple[str, BaseModel]]]


def _flush(store: RunStore, rows: Rows) -> None:
    for stage, items in rows.items():
        store.put_many(stage, items)
    rows.clear()


def put_response(
    rows: Rows,
    instance: Instance,
    rubric: Rubric,
    weights: dict[str, int],
    model: str,
    images: bool,
    quality: float,
    baseline: bool,
    rng: random.Random,
) -> None:
    key = stages.response_key(model, images, instance.id, 0)
    rows.setdefault(stages.EVAL_RESPONSE, []).append(
        (
            key,
            Response(
                instance_id=instance.id,
                model=model,
                images=images,
                text="……",
                is_baseline=baseline,
            ),
        )
    )
    truth = judge(rubric, quality, rng)
    positive_total, approved, version = rubric.positive_total, rubric.approved, rubric.version
    incomplete = instance.id == "case-000" and model == "model-b" and images
    for grader_index, grader in enumerate(JUDGES):
        values = truth if grader_index == 0 else noisy(truth, 0.08, rng)
        for cid, value in values.items():
            rows.setdefault(stages.EVAL_VERDICT, []).append(
                (f"{grader}|{key}|{cid}", Verdict(criterion_id=cid, value=value, grader=grader))
            )
        score = None if incomplete else complete_rubric_score(weights, values)
        rows.setdefault(stages.EVAL_SCORE, []).append(
            (
                f"{grader}|{key}",
                CaseScore(
                    instance_id=instance.id,
                    model=model,
                    images=images,
                    score=score,
                    complete=score is not None,
                    positive_points_total=positive_total,
                    positive_met=sum(values[c.id] for c in rubric.criteria if c.weight > 0),
                    negative_triggered=sum(values[c.id] for c in rubric.criteria if c.weight < 0),
                    rubric_approved=approved,
                    rubric_version=version,
                ),
            )
        )
    if model == next(iter(MODELS)) and images:
        for reviewer in REVIEWERS:
            for cid, value in noisy(truth, 0.1, rng).items():
                rows.setdefault(stages.PANEL_VERDICT, []).append(
                    (
                        f"{reviewer}|{key}|{cid}",
                        Verdict(criterion_id=cid, value=value, grader=reviewer),
                    )
                )
