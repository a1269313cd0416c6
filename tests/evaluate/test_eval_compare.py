"""`eval compare RESULTS A B`: the paired difference on stdout (a table, or JSON with
``--json -``), equal to the report's paired table row; user mistakes are one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.report.paired import compare_conditions
from medrealmm.stats import load_scored_cases
from medrealmm.store import RunStore
from medrealmm.testing.synthetic_store import build_synthetic_store


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_synthetic_store(tmp_path_factory.mktemp("compare") / "run", cases=12)


def test_compare_prints_json_equal_to_the_paired_computation(run: Path) -> None:
    result = CliRunner().invoke(
        app, ["eval", "compare", str(run), "模型甲", "模型甲", "--images-b", "off", "--json", "-"]
    )
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    with RunStore(run) as store:
        records = [r for r in load_scored_cases(store) if r.grader == "judge-a" and r.sample == 0]
    a = [r for r in records if r.condition == ("模型甲", True) and not r.stale]
    b = [r for r in records if r.condition == ("模型甲", False) and not r.stale]
    found = compare_conditions(a, b)
    assert found is not None
    assert row["difference"] == pytest.approx(100 * found.difference, abs=1e-3)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        (100 * found.low, 100 * found.high), abs=1e-3
    )
    assert row["p_value"] == pytest.approx(found.p_value, abs=1e-4)
    assert (row["images_a"], row["images_b"]) == (True, False)


def test_compare_table_and_errors(run: Path) -> None:
    shown = CliRunner().invoke(app, ["eval", "compare", str(run), "模型甲", "model-b"])
    assert shown.exit_code == 0 and "Paired difference" in shown.stdout
    missing = CliRunner().invoke(app, ["eval", "compare", str(run), "nope", "model-b"])
    assert missing.exit_code == 2 and "'nope' has no scores" in missing.output
    assert "Traceback" not in missing.output


def test_compare_is_in_the_help() -> None:
    result = CliRunner().invoke(app, ["eval", "--help"])
    assert "compare" in result.output


def test_eval_score_weight_consultation_averages_consultations(run: Path, tmp_path: Path) -> None:
    """`eval score --weight consultation`: each row's score is the mean of its consultations'
    means (sample 0, complete cases), computed here by a loop; the JSON says the weighting."""
    out = tmp_path / "scores.json"
    result = CliRunner().invoke(
        app, ["eval", "score", str(run), "--weight", "consultation", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text("utf-8"))
    assert payload["weighting"] == "consultation"
    with RunStore(run) as store:
        records = [
            r
            for r in load_scored_cases(store)
            if r.grader == payload["grader"] and r.sample == 0 and not r.stale
        ]
    for row in payload["rows"]:
        groups: dict[str, list[float]] = {}
        for r in records:
            if (r.model, r.images) == (row["model"], row["images"]) and r.score is not None:
                groups.setdefault(r.consultation_id or r.instance_id, []).append(r.score)
        means = [sum(v) / len(v) for v in groups.values()]
        assert row["score"] == pytest.approx(sum(means) / len(means), abs=1e-12)
