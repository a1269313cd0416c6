"""Meta-evaluation from the run store and label files: the panel, the exchange format, the CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate.meta_eval import import_labels, load_meta_inputs, meta_eval
from medrealmm.rubric.rounds import evaluation_rubrics
from medrealmm.schema import Verdict
from medrealmm.stats.meta_eval import ALL, ALL_PHYSICIANS
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import ResponseKey, VerdictKey
from medrealmm.testing.simulated_panel import PHYSICIANS, simulate_panel_labels
from medrealmm.testing.synthetic_store import build_synthetic_store

sklearn_metrics = pytest.importorskip("sklearn.metrics")


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_synthetic_store(tmp_path_factory.mktemp("meta") / "run", cases=10)


def write_lines(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_panel_verdicts_are_the_physicians_and_graders_are_scored_against_them(
    store_path: Path,
) -> None:
    with RunStore(store_path) as store:
        inputs = load_meta_inputs(store)
        rows = meta_eval(store, resamples=100)
    assert set(inputs.physicians) == {"dr-1", "dr-2", "dr-3"}
    assert set(inputs.graders) == {"judge-a", "judge-b"}
    head = {r.rater: r for r in rows if r.reference == ALL_PHYSICIANS and r.axis == ALL}
    assert set(head) == {"judge-a", "judge-b", "dr-1", "dr-2", "dr-3"}
    items = sorted(inputs.info)
    rater, reference = [], []
    for physician in sorted(inputs.physicians):
        rater += [inputs.graders["judge-a"][i] for i in items]
        reference += [inputs.physicians[physician][i] for i in items]
    expected = sklearn_metrics.f1_score(reference, rater, average="macro")
    assert head["judge-a"].balanced_f1 == pytest.approx(expected, abs=1e-4)
    assert head["judge-a"].cases == 10 and head["dr-1"].pairs == 2 * len(items)


def test_a_label_file_adds_an_outside_panel_and_the_cli_writes_every_row(
    store_path: Path, tmp_path: Path
) -> None:
    with RunStore(store_path) as store:
        lines = simulate_panel_labels(store, model="model-b")
    assert {line["physician"] for line in lines} == set(PHYSICIANS)
    labels = write_lines(tmp_path / "labels.jsonl", lines)
    out = tmp_path / "meta.csv"
    args = ["eval", "meta", str(store_path), "--labels", str(labels), "--csv", str(out)]
    result = CliRunner().invoke(app, [*args, "--resamples", "50"])
    assert result.exit_code == 0, result.output
    assert "balanced F1" in result.output and "医生甲" in result.output
    with out.open(encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["rater"] for r in rows} >= {"judge-a", "医生甲", "dr-1"}
    assert {r["axis"] for r in rows} == {"all", "polarity", "category"}


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"criterion_id": "zz"}, "criterion_id", "not in the rubric"),
        ({"instance_id": "nope"}, "instance_id", "no rubric"),
        ({"model": "nobody"}, "model", "no reply"),
        ({"met": "perhaps"}, "met", ""),
    ],
)
def test_bad_labels_name_file_line_and_field(
    store_path: Path, tmp_path: Path, change: dict, field: str, message: str
) -> None:
    with RunStore(store_path) as store:
        good = simulate_panel_labels(store, model="model-b")[:2]
    path = write_lines(tmp_path / "bad.jsonl", [good[0], {**good[1], **change}])
    result = CliRunner().invoke(app, ["eval", "meta", str(store_path), "--labels", str(path)])
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "bad.jsonl:2" in text and field in text and message in text
    assert "Traceback" not in text


def test_a_contradicting_repeat_is_refused(store_path: Path, tmp_path: Path) -> None:
    with RunStore(store_path) as store:
        first = simulate_panel_labels(store, model="model-b")[0]
    path = write_lines(tmp_path / "twice.jsonl", [first, {**first, "met": not first["met"]}])
    result = CliRunner().invoke(app, ["eval", "meta", str(store_path), "--labels", str(path)])
    assert result.exit_code == 2 and "contradicts" in result.output


def test_imported_labels_become_panel_verdicts(tmp_path: Path) -> None:
    path = build_synthetic_store(tmp_path / "run", cases=3)
    with RunStore(path) as store:
        lines = simulate_panel_labels(store, model="model-b")
        labels = write_lines(tmp_path / "labels.jsonl", lines)
        before = store.count(stages.PANEL_VERDICT)
        assert import_labels(store, labels) == len(lines)
        assert store.count(stages.PANEL_VERDICT) == before + len(lines)
        assert import_labels(store, labels) == len(lines)  # idempotent
        assert store.count(stages.PANEL_VERDICT) == before + len(lines)
        stored = dict(store.items(stages.PANEL_VERDICT, Verdict))
    line = lines[0]
    key = f"{line['physician']}|model-b|img|{line['instance_id']}|0|{line['criterion_id']}"
    assert stored[key].value is line["met"]


def test_a_line_that_is_not_json_is_named(store_path: Path, tmp_path: Path) -> None:
    with RunStore(store_path) as store:
        good = simulate_panel_labels(store, model="model-b")[0]
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(good, ensure_ascii=False) + "\n{not json\n", "utf-8")
    result = CliRunner().invoke(app, ["eval", "import-labels", str(store_path), str(path)])
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "broken.jsonl:2" in text and "Traceback" not in text


def test_a_verdict_on_an_older_criterion_version_is_left_out(tmp_path: Path) -> None:
    path = build_synthetic_store(tmp_path / "run", cases=3)
    with RunStore(path) as store:
        item = sorted(load_meta_inputs(store).graders["judge-a"])[0]
        response, criterion_id = item
        rubric = evaluation_rubrics(store)[ResponseKey.parse(response).instance_id]
        current = next(c.version for c in rubric.criteria if c.id == criterion_id)
        key = VerdictKey("judge-a", response, criterion_id).format()
        verdict = store.get(stages.EVAL_VERDICT, key, Verdict)
        assert verdict is not None
        for version, kept in ((current, True), ("older", False)):
            stamped = verdict.model_copy(update={"criterion_version": version})
            store.put(stages.EVAL_VERDICT, key, stamped)
            assert (item in load_meta_inputs(store).graders["judge-a"]) is kept
