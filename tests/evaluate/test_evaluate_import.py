"""eval import-responses: replies made elsewhere scored as a row (the paper's Table 3)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate import ONLINE, EvalSettings, load_results, run_evaluation
from medrealmm.evaluate.imported import import_responses
from medrealmm.schema import Instance
from medrealmm.store import RunStore, stages

from .conftest import demo_instances, fill_store


def write_replies(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_imported_replies_score_like_the_same_text_from_a_model(
    eval_store: RunStore, tmp_path: Path
) -> None:
    instances = list(eval_store.iter(stages.MCCP_INSTANCE, Instance))
    rows = [{"instance_id": i.id, "reply": i.target_reply} for i in instances[:3]]
    outcome = import_responses(eval_store, write_replies(tmp_path / "r.jsonl", rows), "docs")
    run_evaluation(eval_store, EvalSettings(model=ONLINE))
    assert outcome.incomplete == 1 and outcome.responses.failed == 1  # the unanswered one
    results = load_results(eval_store)
    by_case = {(r.model, r.instance_id): r.score for r in results.records}
    for instance in instances[:3]:
        assert by_case[("docs", instance.id)] == by_case[(ONLINE, instance.id)]
    assert by_case[("docs", instances[3].id)] is None  # incomplete, never a 0
    assert results.imported() == {("docs", True)}
    (spec,) = [s for s in results.specs.values() if s.kind == "imported"]
    assert spec.label == "docs" and spec.imported_from and spec.model is None


def test_a_changed_file_is_regraded_and_an_unchanged_one_kept(
    eval_store: RunStore, tmp_path: Path
) -> None:
    instances = list(eval_store.iter(stages.MCCP_INSTANCE, Instance))
    rows = [{"instance_id": i.id, "reply": i.target_reply} for i in instances]
    import_responses(eval_store, write_replies(tmp_path / "a.jsonl", rows), "docs")
    rows[0] = {"instance_id": instances[0].id, "reply": "请线下就诊。"}
    second = import_responses(eval_store, write_replies(tmp_path / "b.jsonl", rows), "docs")
    assert second.responses.done == 4  # a new file is a new evaluation: every reply restamped
    assert second.verdicts.done == 4  # but only the changed reply's 4 criteria are graded
    third = import_responses(eval_store, tmp_path / "b.jsonl", "docs")
    assert third.responses.done == 0 and third.verdicts.done == 0


def test_bad_files_name_the_line_and_field(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore(run) as store:
        fill_store(store, demo_instances(2))
        known = sorted(store.keys(stages.MCCP_INSTANCE))
    runner = CliRunner()
    first = {"instance_id": known[0], "reply": "好"}
    cases = {
        "unknown": ([first, {"instance_id": "nope", "reply": "x"}], ".jsonl:2", "unknown instance"),
        "twice": ([first, {"instance_id": known[0], "reply": "x"}], ".jsonl:2", "given twice"),
        "field": ([{"instance_id": known[0]}], ".jsonl:1", "reply"),
    }
    for name, (rows, line, message) in cases.items():
        path = write_replies(tmp_path / f"{name}.jsonl", rows)  # type: ignore[arg-type]
        args = ["eval", "import-responses", str(run), str(path), "--name", "d"]
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        text = " ".join(result.output.split())
        assert line in text and message in text and "Traceback" not in text
    ok = write_replies(tmp_path / "ok.jsonl", [{"instance_id": known[0], "reply": "好"}])
    reserved = runner.invoke(app, ["eval", "import-responses", str(run), str(ok), "--name", ONLINE])
    assert reserved.exit_code == 2 and "not allowed" in " ".join(reserved.output.split())


def test_report_shows_table_3_only_when_replies_were_imported(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore(run) as store:
        fill_store(store, demo_instances(3))
        run_evaluation(store, EvalSettings(model=ONLINE))
        instances = list(store.iter(stages.MCCP_INSTANCE, Instance))
    runner = CliRunner()
    before = runner.invoke(app, ["report", str(run), str(tmp_path / "r1"), "--resamples", "20"])
    assert before.exit_code == 0, before.output
    assert "表 3" not in (tmp_path / "r1" / "index.html").read_text("utf-8")
    rows = [{"instance_id": i.id, "reply": i.target_reply + "请按时复诊。"} for i in instances]
    path = write_replies(tmp_path / "docs.jsonl", rows)
    imported = runner.invoke(
        app, ["eval", "import-responses", str(run), str(path), "--name", "physicians-deliberate"]
    )
    assert imported.exit_code == 0, imported.output
    after = runner.invoke(app, ["report", str(run), str(tmp_path / "r2"), "--resamples", "20"])
    assert after.exit_code == 0, after.output
    assert "表 3" in (tmp_path / "r2" / "index.html").read_text("utf-8")
    table = json.loads((tmp_path / "r2" / "tables" / "deliberative.json").read_text("utf-8"))
    assert {r["model"] for r in table["rows"]} == {"physicians-deliberate", ONLINE}
