"""The offline baseline over the whole demo, and the CLI round trip."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.rubric import (
    MAX_CRITERIA,
    MIN_CRITERIA,
    RubricSettings,
    pending_review,
    round_history,
)
from medrealmm.rubric.stage import generate_all
from medrealmm.schema import CriterionKind, Instance, MaxCharsRule
from medrealmm.store import RunStore, stages


def _seed(run: Path, instances: list[Instance], image_root: Path) -> None:
    with RunStore(run) as store:
        store.put_many(stages.MCCP_INSTANCE, ((i.id, i) for i in instances))
        store.set_meta(stages.image_root_key(stages.MCCP_INSTANCE), str(image_root))


def test_offline_baseline_gives_valid_rubrics_for_the_whole_demo(tmp_path: Path) -> None:
    """The real chain: demo corpus -> MCCP instances -> rubric round 0, exported, unapproved."""
    from medrealmm.pipeline import run_demo

    summary = run_demo(tmp_path)
    settings = RubricSettings()
    with RunStore(tmp_path) as store:
        demo_instances = list(store.iter(stages.MCCP_INSTANCE, Instance))
        assert len(demo_instances) >= 30
        assert store.failures(stages.RUBRIC_ROUND) == {}
        assert store.count(stages.RUBRIC_FINAL) == 0  # the demo has no physicians
        for instance in demo_instances:
            (rubric,) = round_history(store, instance.id)
            assert MIN_CRITERIA <= len(rubric.criteria) <= MAX_CRITERIA
            assert all(c.weight != 0 and -20 <= c.weight <= 20 for c in rubric.criteria)
            assert any(c.weight > 0 for c in rubric.criteria)
            assert any(c.weight < 0 and c.kind is CriterionKind.LLM for c in rubric.criteria)
            (rule,) = [c for c in rubric.criteria if c.kind is CriterionKind.RULE]
            assert isinstance(rule.rule, MaxCharsRule)
            assert len(instance.target_reply) <= rule.rule.limit <= settings.platform_char_limit
            assert not rubric.approved
        assert len(pending_review(store)) == len(demo_instances)
        withdrawn = store.keys(stages.RELEASE_WITHDRAWN)  # the demo's 0.2 withdraws a case
        kept = [i for i in demo_instances if i.consultation_id not in withdrawn]
    exported = (tmp_path / "rubric" / "review.jsonl").read_text(encoding="utf-8").splitlines()
    assert withdrawn and len(exported) == len(kept) < len(demo_instances)
    assert not (tmp_path / "rubric" / "STALE").exists()
    assert not (tmp_path / "mccp" / "STALE").exists()
    assert any(line.startswith("rubrics (offline baseline)") for line in summary)


def test_cli_round_trip(tmp_path: Path, tinea_instance: Instance, demo_dir: Path) -> None:
    run = tmp_path / "run"
    _seed(run, [tinea_instance], demo_dir)
    cli = CliRunner()

    def invoke(*args: str) -> str:
        result = cli.invoke(app, ["rubric", *args])
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split())  # rich wraps long lines

    assert "round 0" in invoke("generate", str(run))
    assert "awaiting_review" in invoke("status", str(run))
    assert "1 rubric rounds await review" in invoke("export-round", str(run))
    feedback = run / "rubric" / "feedback.jsonl"
    line = json.loads(feedback.read_text(encoding="utf-8"))
    line["items"] = [{"type": "wrong_weight", "criterion_id": "c01", "weight": 11}]
    feedback.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert "1 to refine" in invoke("import-feedback", str(run), str(feedback), "--reviewer", "dr")
    assert "rubric.refiner: 1 calls to make" in invoke("refine", str(run), "--dry-run")
    assert "1 done" in invoke("refine", str(run))
    shown = invoke("status", str(run), "--instance", tinea_instance.id)
    assert "round 1" in shown and "weight +8 -> +11" in shown
    invoke("export-round", str(run))
    assert "1 approved" in invoke("import-feedback", str(run), str(feedback), "--reviewer", "dr")
    assert "approved" in invoke("status", str(run))


def test_cli_errors_are_one_line(tmp_path: Path, tinea_instance: Instance, demo_dir: Path) -> None:
    cli = CliRunner()
    missing = cli.invoke(app, ["rubric", "status", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "no run store" in missing.output
    run = tmp_path / "run"
    _seed(run, [tinea_instance], demo_dir)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"instance_id": "x", "round": 0}\n', encoding="utf-8")
    result = cli.invoke(app, ["rubric", "import-feedback", str(run), str(bad)])
    output = " ".join(result.output.split())
    assert result.exit_code == 2 and "bad.jsonl:1: field 'reviewer'" in output
    for command in ("generate", "export-round", "import-feedback", "refine", "status"):
        assert cli.invoke(app, ["rubric", command, "--help"]).exit_code == 0


async def test_real_models_get_the_patient_images(
    tmp_path: Path, demo_instances: list[Instance], demo_dir: Path
) -> None:
    from medrealmm.llm import OpenAICompatibleClient
    from medrealmm.testing import FakeOpenAIServer, FakeReply

    instance = next(i for i in demo_instances if i.image_count >= 2)
    _seed(tmp_path, [instance], demo_dir)
    reply = json.dumps({"criteria": [{"text": "结合图片作出判断", "weight": 6}] * 2})
    with FakeOpenAIServer(lambda body: FakeReply(content=reply)) as server, RunStore(tmp_path) as s:
        client = OpenAICompatibleClient("vlm", base_url=server.base_url, max_attempts=1)
        await generate_all(s, client, RubricSettings())
    (request,) = server.requests
    parts = request["messages"][-1]["content"]
    images = [p for p in parts if p["type"] == "image_url"]
    assert len(images) == instance.image_count
    assert images[0]["image_url"]["url"].startswith("data:image/")
    first = next(i for i, p in enumerate(parts) if p["type"] == "image_url")
    assert parts[first - 1]["text"].endswith("[图片1（患者上传）]")  # inline after its marker


def test_demo_stage_generates_round_zero_and_exports_it_unapproved(
    tmp_path: Path, demo_instances: list[Instance], demo_dir: Path
) -> None:
    from medrealmm.pipeline import PipelineSettings, StageContext, run_stage, stage_named

    _seed(tmp_path, demo_instances[:5], demo_dir)
    with RunStore(tmp_path) as store:
        ctx = StageContext(store, tmp_path, PipelineSettings(input=demo_dir))
        (line,) = run_stage(stage_named("rubric"), ctx).lines
        again = run_stage(stage_named("rubric"), ctx).lines  # a rerun reuses finished rounds
        assert store.count(stages.RUBRIC_ROUND) == 5 and store.count(stages.RUBRIC_FINAL) == 0
    assert "rubrics (offline baseline)" in line and "5 exported" in line and again == [line]
    packets = (tmp_path / "rubric" / "review.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(packets) == 5
