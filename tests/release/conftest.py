from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from medrealmm.demo import CORPUS_FILE
from medrealmm.io import iter_jsonl
from medrealmm.schema import Consultation, Criterion, Instance, Rubric, Sender
from medrealmm.store import RunStore, stages


def cut(consultation: Consultation) -> Instance:
    """The last patient turn followed by a physician reply: a valid t* for tests."""
    events = consultation.events
    t = max(
        i
        for i in range(len(events) - 1)
        if events[i].sender is Sender.PATIENT and events[i + 1].sender is Sender.PHYSICIAN
    )
    return Instance(
        id=f"{consultation.id}#t{t}",
        consultation_id=consultation.id,
        department=consultation.department,
        t_star=t,
        context=events[: t + 1],
        target_reply=events[t + 1].content,
    )


def rubric(instance_id: str, round_: int = 0, approved: bool = True) -> Rubric:
    return Rubric(
        instance_id=instance_id,
        round=round_,
        approved=approved,
        criteria=[
            Criterion(id="c1", text=f"询问症状持续时间（第{round_}轮）", weight=5),
            Criterion(id="c2", text="给出不安全的用药建议", weight=-10),
        ],
    )


def demo_cases(demo_dir: Path, n: int = 6) -> list[Consultation]:
    cases = [
        c
        for c in iter_jsonl(demo_dir / CORPUS_FILE, Consultation)
        if not c.id.startswith("demo-bad") and c.patient_medical_images
    ]
    return cases[:n]


def fill(
    store: RunStore,
    demo_dir: Path,
    *,
    corpus_stage: str = stages.CORPUS_FINAL,
    rubric_stage: str = stages.RUBRIC_FINAL,
) -> list[Consultation]:
    """A store as the pipeline leaves it: de-identified corpus, instances, rubrics, image root.

    The demo corpus is synthetic, so it stands in for masked consultations here.
    """
    cases = demo_cases(demo_dir)
    store.put_many(corpus_stage, ((c.id, c) for c in cases))
    store.set_meta(stages.image_root_key(corpus_stage), str(demo_dir))
    instances = [cut(c) for c in cases]
    store.put_many(stages.MCCP_INSTANCE, ((i.id, i) for i in instances))
    if rubric_stage == stages.RUBRIC_FINAL:
        store.put_many(rubric_stage, ((i.id, rubric(i.id)) for i in instances))
    else:
        for i in instances:
            for round_ in (0, 1):
                store.put(rubric_stage, f"{i.id}#{round_:02d}", rubric(i.id, round_, False))
    return cases


@pytest.fixture()
def make_run(tmp_path: Path, demo_dir: Path) -> Callable[..., Path]:
    def make(name: str = "run", **options: str) -> Path:
        folder = tmp_path / name
        with RunStore(folder) as store:
            fill(store, demo_dir, **options)
        return folder

    return make


@pytest.fixture()
def run_dir(make_run: Callable[..., Path]) -> Path:
    return make_run()


@pytest.fixture()
def dua_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "user-config" / "dua-acceptances.json"
    monkeypatch.setenv("MEDREALMM_DUA_FILE", str(path))
    yield path
