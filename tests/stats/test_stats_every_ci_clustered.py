"""Every confidence interval resamples consultations: each function that makes one is listed
here (a scan of the source finds every caller of a bootstrap, so a new one must be added) and
checked against a brute-force loop that draws whole consultations, case by case."""

from __future__ import annotations

import ast
import random
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import medrealmm
from medrealmm.report.tables import deliberative_table, overall_table
from medrealmm.stats.cases import ONLINE_MODEL, CaseRecord
from medrealmm.stats.meta_eval import ALL, ALL_PHYSICIANS, ItemInfo, balanced_f1, meta_evaluate

#: Every function outside ``stats/bootstrap.py`` that calls a bootstrap, by module.
CI_PRODUCERS = {
    ("report/tables.py", "overall_table"),
    ("report/tables.py", "deliberative_table"),
    ("stats/meta_eval.py", "meta_evaluate"),
    ("stats/paired.py", "paired_difference"),
    ("report/paired.py", "compare_conditions"),
    ("report/paired.py", "paired_table"),
    ("cli/compare.py", "compare_command"),  # compare_conditions' interval, printed
}
#: What a CI producer calls: a bootstrap, or a producer listed above.
PRODUCER_CALLS = ("bootstrap_", "paired_difference", "compare_conditions")
RESAMPLES = 300


def _callers() -> set[tuple[str, str]]:
    root = Path(medrealmm.__file__).parent
    found = set()
    for path in root.rglob("*.py"):
        name = path.relative_to(root).as_posix()
        if name == "stats/bootstrap.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for call in ast.walk(node):
                if isinstance(call, ast.Call):
                    func = call.func
                    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                    if called.startswith(PRODUCER_CALLS):
                        found.add((name, node.name))
    return found


def test_every_ci_producing_function_is_listed_here() -> None:
    assert _callers() == CI_PRODUCERS


def brute_cluster_ci(
    values: list[float], clusters: list[str], *, seed: int, resamples: int = RESAMPLES
) -> tuple[float, float]:
    """Draw consultations with replacement (labels in order of first appearance, the draws of
    numpy's generator), pool every case of each drawn one, take the mean; percentiles."""
    members: dict[str, list[float]] = defaultdict(list)
    for value, cluster in zip(values, clusters, strict=True):
        members[cluster].append(value)
    labels = list(members)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(labels), size=(resamples, len(labels)))
    means = []
    for row in picks:
        pooled = [v for pick in row for v in members[labels[pick]]]
        means.append(sum(pooled) / len(pooled))
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


BASE = CaseRecord(
    grader="g", model="m", images=True, instance_id="", sample=0, score=0.0,
    positive_met=0, negative_triggered=0, department="d", subspecialty="s", intent="i",
    stage="s", image_count=1, turn_count=3, baseline=False,
)  # fmt: skip


def _records(seed: int) -> list[CaseRecord]:
    """Three conditions on 8 consultations of 1-3 challenge points each."""
    rng = random.Random(seed)
    records = []
    for c in range(8):
        for t in range(rng.randint(1, 3)):
            case = f"c{c}-t{t}"
            for model in (ONLINE_MODEL, "imported", "m"):
                records.append(
                    replace(BASE, model=model, instance_id=case, consultation_id=f"c{c}",
                            score=round(rng.random(), 3))
                )  # fmt: skip
    return records


@pytest.mark.parametrize("seed", range(3))
def test_overall_table_resamples_consultations(seed: int) -> None:
    records = _records(seed)
    table = overall_table(records, seed=seed, resamples=RESAMPLES)
    for row in table.rows:
        mine = sorted((r for r in records if r.model == row["model"]), key=lambda r: r.instance_id)
        low, high = brute_cluster_ci(
            [r.score for r in mine], [r.consultation_id for r in mine], seed=seed
        )
        assert row["ci_low"] == pytest.approx(100 * low, abs=1e-3)
        assert row["ci_high"] == pytest.approx(100 * high, abs=1e-3)
        assert row["consultations"] == 8


@pytest.mark.parametrize("seed", range(3))
def test_table_3_resamples_consultations(seed: int) -> None:
    records = _records(seed)
    overall = overall_table(records, seed=seed, resamples=RESAMPLES)
    table = deliberative_table(records, overall, {("imported", True)}, seed=seed,
                               resamples=RESAMPLES)  # fmt: skip
    assert {r["role"] for r in table.rows} == {"online", "imported", "model"}
    for row in table.rows:
        mine = sorted((r for r in records if r.model == row["model"]), key=lambda r: r.instance_id)
        low, high = brute_cluster_ci(
            [r.score for r in mine], [r.consultation_id for r in mine], seed=seed
        )
        assert row["ci_low"] == pytest.approx(100 * low, abs=1e-3)
        assert row["ci_high"] == pytest.approx(100 * high, abs=1e-3)
        assert row["consultations"] == 8


def brute_meta_ci(
    pairs: list[tuple[str, bool, bool]], *, seed: int, resamples: int = RESAMPLES
) -> tuple[float, float]:
    """(consultation, rater, reference) pairs: draw consultations (sorted labels), pool every
    pair of each drawn one, take the balanced F1; percentiles of the defined ones."""
    members: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for unit, a, b in pairs:
        members[unit].append((a, b))
    labels = sorted(members)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(labels), size=(resamples, len(labels)))
    values = []
    for row in picks:
        counts = np.zeros(4)
        for pick in row:
            for a, b in members[labels[pick]]:
                counts[(0 if b else 1) if a else (2 if b else 3)] += 1
        value = float(balanced_f1(counts))
        if not np.isnan(value):
            values.append(value)
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)


@pytest.mark.parametrize("seed", range(3))
def test_meta_evaluation_resamples_consultations(seed: int) -> None:
    rng = random.Random(seed)
    info, truth = {}, {}
    for c in range(10):
        consultation = f"consultation-{c // 3}"  # three cases cut from each dialogue
        for j in range(4):
            item = (f"m|img|case-{c}|0", f"c{j}")
            info[item] = ItemInfo(f"case-{c}", "positive", "k", consultation)
            truth[item] = rng.random() < 0.6
    flip = {i: (not v) if rng.random() < 0.2 else v for i, v in truth.items()}
    rows = meta_evaluate({"judge": flip}, {"dr-1": truth, "dr-2": truth}, info, seed=seed,
                         resamples=RESAMPLES)  # fmt: skip
    (row,) = [
        r for r in rows
        if r.rater == "judge" and r.reference == ALL_PHYSICIANS and r.axis == ALL
    ]  # fmt: skip
    pairs = [(info[i].consultation, flip[i], truth[i]) for i in sorted(info) for _ in range(2)]
    low, high = brute_meta_ci(pairs, seed=seed)
    assert (row.cases, row.consultations) == (10, 4)
    assert row.f1_low == pytest.approx(low, abs=1e-4)
    assert row.f1_high == pytest.approx(high, abs=1e-4)


@pytest.mark.parametrize("seed", range(3))
def test_paired_table_resamples_consultations(seed: int) -> None:
    from medrealmm.report.paired import paired_table

    records = _records(seed)
    overall = overall_table(records, seed=seed, resamples=RESAMPLES)
    table = paired_table(records, overall, grader="g", seed=seed, resamples=RESAMPLES)
    assert len(table.rows) == 3  # every two of three conditions
    for row in table.rows:
        a = {r.instance_id: r for r in records if r.model == row["model_a"]}
        b = {r.instance_id: r for r in records if r.model == row["model_b"]}
        cases = sorted(a)
        low, high = brute_cluster_ci(
            [a[c].score - b[c].score for c in cases],
            [a[c].consultation_id for c in cases],
            seed=seed,
        )
        assert row["ci_low"] == pytest.approx(100 * low, abs=1e-3)
        assert row["ci_high"] == pytest.approx(100 * high, abs=1e-3)
        assert (row["cases"], row["consultations"]) == (len(cases), 8)
