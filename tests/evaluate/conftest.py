"""Instances and rubrics built here from the demo corpus, so evaluation tests stand alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.io import file_sha256, iter_jsonl
from medrealmm.release.build import release_store
from medrealmm.release.dua import record_acceptance
from medrealmm.release.layout import ReleaseInfo
from medrealmm.schema import (
    Consultation,
    Criterion,
    CriterionKind,
    Instance,
    MaxCharsRule,
    Rubric,
    Sender,
)
from medrealmm.store import RunStore, stages


def instance_from(consultation: Consultation) -> Instance | None:
    """Crop after the first patient turn with images that a physician answered."""
    events = consultation.events
    for t, event in enumerate(events[:-1]):
        if (
            event.sender is Sender.PATIENT
            and consultation.patient_medical_images
            and any(e.patient_medical_images for e in events[: t + 1])
            and events[t + 1].sender is Sender.PHYSICIAN
        ):
            return Instance(
                id=f"{consultation.id}@{t}",
                consultation_id=consultation.id,
                department=consultation.department,
                t_star=t,
                context=events[: t + 1],
                target_reply=events[t + 1].content,
            )
    return None


def rubric_for(instance: Instance, *, round_: int = 0, approved: bool = False) -> Rubric:
    return Rubric(
        instance_id=instance.id,
        round=round_,
        approved=approved,
        criteria=[
            Criterion(id="c1", text="询问症状持续时间和既往病史", weight=5),
            Criterion(id="c2", text=instance.target_reply[:12], weight=8),
            Criterion(id="c3", text="建议患者自行停药或加量", weight=-6),
            Criterion(
                id="c4",
                text="回复不超过500字",
                weight=2,
                kind=CriterionKind.RULE,
                rule=MaxCharsRule(limit=500),
            ),
        ],
    )


def demo_instances(limit: int | None = None) -> list[Instance]:
    found = []
    for consultation in iter_jsonl(bundled_corpus_dir() / CORPUS_FILE, Consultation):
        if consultation.id.startswith("demo-bad"):
            continue
        instance = instance_from(consultation)
        if instance is not None:
            found.append(instance)
    return found[:limit]


def fill_store(store: RunStore, instances: list[Instance], *, approve_first: bool = True) -> None:
    store.set_meta(stages.image_root_key(stages.MCCP_INSTANCE), str(bundled_corpus_dir()))
    store.put_many(stages.MCCP_INSTANCE, ((i.id, i) for i in instances))
    for index, instance in enumerate(instances):
        store.put(stages.RUBRIC_ROUND, f"{instance.id}#00", rubric_for(instance))
        if index == 0 and approve_first:
            final = rubric_for(instance, round_=1, approved=True)
            store.put(stages.RUBRIC_ROUND, f"{instance.id}#01", final)
            store.put(stages.RUBRIC_FINAL, instance.id, final)


@pytest.fixture()
def eval_store(tmp_path: Path) -> Iterator[RunStore]:
    with RunStore(tmp_path / "run") as store:
        fill_store(store, demo_instances(4))
        yield store


INFO = ReleaseInfo(
    name="medrealmm-test",
    version="1.0",
    title="test release",
    authors=("t",),
    dua="测试用数据使用协议。\n",
)
#: What the fake model server answers to every reply request.
REPLY = "您好，请问症状持续多长时间了？既往病史和过敏史？请不要自行停药，症状加重请线下就诊。"


def tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): file_sha256(p) for p in root.rglob("*") if p.is_file()}


@pytest.fixture()
def builder(tmp_path: Path) -> Path:
    """A builder's run: de-identified corpus (the synthetic demo stands in), instances, rubrics."""
    instances = demo_instances(4)
    wanted = {i.consultation_id for i in instances}
    corpus = bundled_corpus_dir()
    consultations = [c for c in iter_jsonl(corpus / CORPUS_FILE, Consultation) if c.id in wanted]
    folder = tmp_path / "builder"
    with RunStore(folder) as store:
        fill_store(store, instances)
        store.put_many(stages.CORPUS_FINAL, ((c.id, c) for c in consultations))
        store.set_meta(stages.image_root_key(stages.CORPUS_FINAL), str(corpus))
    return folder


@pytest.fixture()
def release(builder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEDREALMM_DUA_FILE", str(tmp_path / "config" / "dua.json"))
    with RunStore(builder) as store:
        out = release_store(
            store, tmp_path / "release", INFO, register=tmp_path / "w.jsonl", allow_unreviewed=True
        ).out
    return out


def accept(release: Path) -> None:
    record_acceptance(
        release / "DUA.md", name="研究员", dataset="medrealmm-test", release="medrealmm-test 1.0"
    )
