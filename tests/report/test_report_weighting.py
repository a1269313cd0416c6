"""--weight consultation: each consultation weighs 1 (its challenge points averaged first),
pinned to a loop over consultations; every score table says which weighting it uses."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import replace

import numpy as np
import pytest

from medrealmm.report.paired import paired_table
from medrealmm.report.tables import build_tables, overall_table, stratified_table
from medrealmm.stats.cases import ONLINE_MODEL, CaseRecord
from medrealmm.stats.raters import RaterData
from medrealmm.stats.weighting import Weighting

RESAMPLES = 300
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
            for model in (ONLINE_MODEL, "imported", "m"):
                records.append(
                    replace(BASE, model=model, instance_id=f"c{c}-t{t}",
                            consultation_id=f"c{c}", score=round(rng.random(), 3))
                )  # fmt: skip
    return records


def _by_consultation(records, model):  # type: ignore[no-untyped-def]
    groups: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r.model == model:
            groups[r.consultation_id].append(r.score)
    return {c: sum(v) / len(v) for c, v in groups.items()}  # first appearance order


def _brute_ci(values: list[float], seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(values), size=(RESAMPLES, len(values)))
    means = [sum(values[p] for p in row) / len(row) for row in picks]
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


@pytest.mark.parametrize("seed", range(3))
def test_consultation_weighting_averages_consultations(seed: int) -> None:
    records = sorted(_records(seed), key=lambda r: r.instance_id)
    table = overall_table(records, seed=seed, resamples=RESAMPLES, weighting=Weighting.CONSULTATION)
    assert "每个问诊权重相同" in table.title
    for row in table.rows:
        means = list(_by_consultation(records, row["model"]).values())
        assert row["mean"] == pytest.approx(100 * sum(means) / len(means), abs=1e-3)
        low, high = _brute_ci(means, seed)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((100 * low, 100 * high), abs=1e-3)
        assert row["cases"] > row["consultations"] == 8
    strata = stratified_table(records, "intent", table, weighting=Weighting.CONSULTATION)
    for row in strata.rows:
        means = list(_by_consultation(records, row["model"]).values())
        assert row["mean"] == pytest.approx(100 * sum(means) / len(means), abs=1e-3)
    paired = paired_table(
        records, table, grader="g", seed=seed, resamples=RESAMPLES,
        weighting=Weighting.CONSULTATION,
    )  # fmt: skip
    for row in paired.rows:
        a = _by_consultation(records, row["model_a"])
        b = _by_consultation(records, row["model_b"])
        diffs = [a[c] - b[c] for c in a]
        assert row["difference"] == pytest.approx(100 * sum(diffs) / len(diffs), abs=1e-3)
        low, high = _brute_ci(diffs, seed)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((100 * low, 100 * high), abs=1e-3)


def test_every_score_table_says_its_weighting() -> None:
    records = _records(0)
    for weighting in Weighting:
        tables = build_tables(
            records, RaterData(verdicts={}), resamples=20, weighting=weighting,
            imported=[("imported", True)],
        )  # fmt: skip
        for name in ("overall", "deliberative", "by_intent", "by_department"):
            assert weighting.note in tables[name].title, name
