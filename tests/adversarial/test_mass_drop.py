"""Failures that look like success: a rubric recorded as failed counts as failed in the chain's
summary, and a screen that drops (or a stage that fails) most of its input warns and exits 1
unless ``--allow-mass-drop``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.demo import CORPUS_FILE
from medrealmm.io import iter_jsonl
from medrealmm.pipeline import PipelineSettings, StageContext, run_stage, stage_named
from medrealmm.pipeline.settings import ModelRoles
from medrealmm.schema import Consultation, Instance, Sender
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply


def _models(folder: Path, server: FakeOpenAIServer) -> Path:
    path = folder / "models.yaml"
    path.write_text(
        f"models:\n  - name: fake\n    model: fake\n    base_url: {server.base_url}\n"
        "    vision: false\n    structured_mode: json_object\n",
        encoding="utf-8",
    )
    return path


def _instance(case: Consultation) -> Instance:
    """An instance cut before the first physician reply that follows a patient turn."""
    events = case.events
    target = next(
        i
        for i in range(1, len(events))
        if events[i].sender is Sender.PHYSICIAN and events[i - 1].sender is Sender.PATIENT
    )
    return Instance(
        id=f"{case.id}@{target - 1}",
        consultation_id=case.id,
        department=case.department,
        subspecialty=case.subspecialty,
        t_star=target - 1,
        context=events[:target],
        target_reply=events[target].content,
    )


def test_a_rubric_recorded_as_failed_is_counted(demo_dir: Path, tmp_path: Path) -> None:
    cases = list(iter_jsonl(demo_dir / CORPUS_FILE, Consultation))[:4]
    junk = FakeOpenAIServer(lambda body: FakeReply(content="这不是JSON"))
    with junk, RunStore(tmp_path / "run") as store:
        store.put_many(stages.MCCP_INSTANCE, ((i.id, i) for i in map(_instance, cases)))
        store.mark_built(stages.MCCP_INSTANCE)
        settings = PipelineSettings(
            input=demo_dir,
            models_config=_models(tmp_path, junk),
            models=ModelRoles(rubric="fake"),
        )
        report = run_stage(stage_named("rubric"), StageContext(store, tmp_path / "run", settings))
        assert store.count(stages.RUBRIC_ROUND, status="failed") == 4
    assert report.failed == 4, report.lines
    assert [loss.step for loss in report.losses if loss.mass] == ["rubric"]


def _build(corpus: Path, run: Path, models: Path, *extra: str) -> tuple[int, str]:
    args = ["corpus", "build", str(corpus), str(run), "--privacy-model", "fake"]
    result = CliRunner().invoke(app, [*args, "--models-config", str(models), *extra])
    return result.exit_code, " ".join(result.output.split())


def test_a_privacy_screen_dropping_everything_exits_1(demo_dir: Path, tmp_path: Path) -> None:
    remove = json.dumps({"remove": True, "reason": "依赖面部"}, ensure_ascii=False)
    with FakeOpenAIServer(lambda body: FakeReply(content=remove)) as server:
        models = _models(tmp_path, server)
        code, output = _build(demo_dir / CORPUS_FILE, tmp_path / "run", models)
        assert code == 1, output
        assert "warning: corpus privacy screen dropped or failed" in output
        assert "--allow-mass-drop" in output
        code, output = _build(
            demo_dir / CORPUS_FILE, tmp_path / "run2", models, "--allow-mass-drop"
        )
    assert code == 0 and "warning: corpus privacy screen" in output, output


def test_a_screen_that_keeps_most_cases_passes_quietly(demo_dir: Path, tmp_path: Path) -> None:
    keep = json.dumps({"remove": False, "reason": ""})
    with FakeOpenAIServer(lambda body: FakeReply(content=keep)) as server:
        code, output = _build(demo_dir / CORPUS_FILE, tmp_path / "run", _models(tmp_path, server))
    assert code == 0 and "warning:" not in output, output
