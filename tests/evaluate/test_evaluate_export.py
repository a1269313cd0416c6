"""`eval export`: one row per reply, read back as written in each format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate import load_results
from medrealmm.store import RunStore


@pytest.fixture()
def results(builder: Path) -> Path:
    for images in ("on", "off"):
        done = CliRunner().invoke(app, ["eval", "run", str(builder), "--images", images])
        assert done.exit_code == 0, done.output
    return builder


def export(results: Path, target: Path) -> None:
    done = CliRunner().invoke(app, ["eval", "export", str(results), "--out", str(target)])
    assert done.exit_code == 0, done.output
    assert f"exported 8 replies to {target}" in " ".join(done.output.split())


def expected(results: Path) -> dict[tuple[str, bool, str], float | None]:
    with RunStore(results) as store:
        records = load_results(store).records
    return {(r.model, r.images, r.instance_id): r.score for r in records}


def check_rows(rows: list[dict], results: Path) -> None:
    scores = expected(results)
    assert len(rows) == len(scores) == 8
    for row in rows:
        want = scores[(row["model"], row["images"], row["case_id"])]
        assert row["score"] == pytest.approx(100 * want)
        assert row["complete"] is True and row["sample"] == 0
        assert row["consultation_id"] and row["case_id"].startswith(row["consultation_id"])
        assert row["reply"] and row["output_tokens"] > 0 and row["latency_s"] is not None
        by_id = {v["criterion_id"]: v for v in row["verdicts"]}
        assert sorted(by_id) == ["c1", "c2", "c3", "c4"]
        assert by_id["c3"]["weight"] == -6 and by_id["c4"]["kind"] == "rule"
        assert all(v["rationale"] and v["met"] in (True, False) for v in by_id.values())


def test_jsonl_round_trip(results: Path, tmp_path: Path) -> None:
    target = tmp_path / "out" / "replies.jsonl"
    export(results, target)
    lines = target.read_text(encoding="utf-8").splitlines()
    check_rows([json.loads(line) for line in lines], results)


def test_parquet_round_trip(results: Path, tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    target = tmp_path / "replies.parquet"
    export(results, target)
    frame = pd.read_parquet(target)
    assert set(frame["images"]) == {True, False}
    rows = frame.to_dict("records")
    for row in rows:  # pyarrow hands nested lists back as arrays
        row["verdicts"] = list(row["verdicts"])
    check_rows(rows, results)


def test_inspect_log_round_trip(results: Path, tmp_path: Path) -> None:
    log_api = pytest.importorskip("inspect_ai.log")
    target = tmp_path / "replies.eval"
    export(results, target)
    log = log_api.read_eval_log(str(target))
    assert log.status == "success" and log.samples is not None and len(log.samples) == 8
    scores = expected(results)
    for sample in log.samples:
        meta = sample.metadata
        score = sample.scores["rubric_score"]
        assert score.value == pytest.approx(
            100 * scores[(meta["model"], meta["images"], meta["case_id"])]
        )
        assert score.answer == sample.output.completion != ""
        assert len(score.metadata["verdicts"]) == 4
    assert log.results is not None
    assert {s.name for s in log.results.scores} == {
        "offline-baseline (img)",
        "offline-baseline (txt)",
    }


def test_unknown_suffix_is_one_line(results: Path, tmp_path: Path) -> None:
    done = CliRunner().invoke(
        app, ["eval", "export", str(results), "--out", str(tmp_path / "x.csv")]
    )
    assert done.exit_code == 2
    assert "unknown export format" in done.output and "Traceback" not in done.output
