"""`eval score` never compares rows on different cases silently, and imported replies show
their own image setting ('imp'), not 'on'."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate import EvalSettings, run_evaluation
from medrealmm.schema import Instance
from medrealmm.store import RunStore, stages

from .conftest import demo_instances, fill_store


def score_json(run: Path, *extra: str) -> dict:
    done = CliRunner().invoke(app, ["eval", "score", str(run), "--json", "-", *extra])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_rows_on_different_cases_are_marked_and_common_compares_the_shared(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    with RunStore(run) as store:
        fill_store(store, demo_instances(4))
        run_evaluation(store, EvalSettings(model="offline", images=True))
        run_evaluation(store, EvalSettings(model="offline", images=False, limit=2))
        instances = sorted(i.id for i in store.iter(stages.MCCP_INSTANCE, Instance))
    replies = tmp_path / "replies.jsonl"
    replies.write_text(
        "".join(
            json.dumps({"instance_id": i, "reply": "请问症状持续多久？"}) + "\n" for i in instances
        ),
        encoding="utf-8",
    )
    imported = CliRunner().invoke(
        app, ["eval", "import-responses", str(run), str(replies), "--name", "docs"]
    )
    assert imported.exit_code == 0, imported.output

    payload = score_json(run)
    rows = {(r["model"], r["images"]): r for r in payload["rows"]}
    assert rows[("offline-baseline", False)]["different_cases"] is True
    assert rows[("offline-baseline", False)]["cases"] == 2
    assert rows[("offline-baseline", True)]["different_cases"] is False
    assert rows[("docs", True)]["imported"] is True

    shown = CliRunner().invoke(app, ["eval", "score", str(run)])
    text = shown.stdout
    line = next(x for x in text.splitlines() if x.lstrip().startswith("offline-baseline* †"))
    assert " off " in f" {line} "
    docs = next(x for x in text.splitlines() if x.lstrip().startswith("docs"))
    assert docs.split()[1] == "imp"  # not 'on': the doctors decided what they looked at
    assert "--common" in shown.stderr

    common = score_json(run, "--common")
    assert common["common"] is True and common["shared_cases"] == 2
    assert {r["complete"] for r in common["rows"]} == {2}
    assert not any(r["different_cases"] for r in common["rows"])
