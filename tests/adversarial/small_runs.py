"""Small runs and releases for the output-safety tests: a few bundled demo cases as the
pipeline leaves them (reviewed, with instances and approved rubrics), released through the CLI
with a DUA of their own, in seconds."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.io import iter_jsonl
from medrealmm.rubric.rounds import round_key
from medrealmm.schema import Consultation, Criterion, Instance, Rubric, Sender
from medrealmm.store import RunStore, stages

#: An invented agreement: builders ship their own (``release build --dua``).
DUA_TEXT = "# 测试数据使用协议\n\n仅用于本测试。\n"


def invoke(*args: str) -> tuple[int, str]:
    """A CLI command in this process: exit code and output, never a traceback."""
    result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, " ".join(result.output.split())


def demo_cases(n: int) -> list[Consultation]:
    cases = iter_jsonl(bundled_corpus_dir() / CORPUS_FILE, Consultation)
    return [c for c in cases if not c.id.startswith("demo-bad") and c.patient_medical_images][:n]


def instance_of(case: Consultation) -> Instance:
    events = case.events
    t = next(
        i
        for i in range(len(events) - 1)
        if events[i].sender is Sender.PATIENT and events[i + 1].sender is Sender.PHYSICIAN
    )
    return Instance(
        id=f"{case.id}#t{t}",
        consultation_id=case.id,
        department=case.department,
        t_star=t,
        context=events[: t + 1],
        target_reply=events[t + 1].content,
    )


def reviewed_run(folder: Path, n: int = 3, *, reviewed: bool = True) -> Path:
    """``n`` cases as the pipeline leaves them, reviewed (corpus.final, instances, approved
    rubrics) or, with ``reviewed=False``, not (corpus.deid, round-0 rubrics); images read in
    place."""
    corpus = stages.CORPUS_FINAL if reviewed else stages.CORPUS_DEID
    with RunStore(folder) as store:
        cases = demo_cases(n)
        store.put_many(corpus, ((c.id, c) for c in cases))
        store.set_meta(stages.image_root_key(corpus), str(bundled_corpus_dir()))
        for case in cases:
            instance = instance_of(case)
            store.put(stages.MCCP_INSTANCE, instance.id, instance)
            rubric = Rubric(
                instance_id=instance.id,
                round=0,
                approved=reviewed,
                criteria=[Criterion(id="c1", text="询问症状持续时间", weight=5)],
            )
            store.put(stages.RUBRIC_ROUND, round_key(instance.id, 0), rubric)
            if reviewed:
                store.put(stages.RUBRIC_FINAL, instance.id, rubric)
    return folder


def dua_file(folder: Path) -> Path:
    path = folder / "our-DUA.md"
    path.write_text(DUA_TEXT, encoding="utf-8")
    return path


def build_release(run: Path, out: Path, *extra: str, version: str = "1.0") -> tuple[int, str]:
    dua = dua_file(run.parent)
    return invoke(
        "release", "build", str(run), str(out), "--version", version, "--dua", str(dua), *extra
    )


def accepted_release(run: Path, out: Path) -> Path:
    """A release of ``run`` in ``out`` whose DUA this account accepted."""
    code, output = build_release(run, out)
    assert code == 0, output
    code, output = invoke("release", "accept-dua", str(out), "--name", "研究员", "--yes")
    assert code == 0, output
    return out
