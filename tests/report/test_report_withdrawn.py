"""A withdrawn consultation leaves every table of the builder's report (scores, strata,
paired differences, Table 2, the meta-evaluation, the dataset counts), which says how many
were withdrawn."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from medrealmm.release.withdrawals import WITHDRAWN, Withdrawal
from medrealmm.report.build import write_report
from medrealmm.schema import Instance
from medrealmm.stats import load_scored_cases
from medrealmm.store import RunStore, stages
from medrealmm.testing.synthetic_store import build_synthetic_store


def test_withdrawn_consultation_leaves_every_table(tmp_path: Path) -> None:
    run = build_synthetic_store(tmp_path / "run", cases=12)
    with RunStore(run) as store:
        before = load_scored_cases(store)
        instances = list(store.iter(stages.MCCP_INSTANCE, Instance))
        gone = instances[0].consultation_id
        store.put(WITHDRAWN, gone, Withdrawal(case_id=gone, date=date(2026, 1, 2), reason="r"))
    left = {i.id for i in instances if i.consultation_id != gone}
    dropped = {i.id for i in instances} - left
    with RunStore(run) as store:
        after = load_scored_cases(store)
        write_report(store, tmp_path / "rep", resamples=20)
    assert dropped and {r.instance_id for r in after} == {
        r.instance_id for r in before if r.instance_id in left
    }
    tables = tmp_path / "rep" / "tables"

    def rows(name: str) -> list[dict]:
        return json.loads((tables / f"{name}.json").read_text("utf-8"))["rows"]

    overall = json.loads((tables / "overall.json").read_text("utf-8"))
    assert "已撤回 1 个问诊" in overall["title"]
    for row in overall["rows"]:
        expected = {
            r.instance_id
            for r in before
            if r.model == row["model"] and r.images == row["images"] and r.sample == 0
            and r.grader == "judge-a" and r.score is not None and r.instance_id in left
        }  # fmt: skip
        assert row["cases"] == len(expected), row["label"]
    head = {r["quantity"]: r["count"] for r in rows("dataset_overview")}
    assert head["instances"] == len(left) and head["withdrawn"] == 1
    assert all(r["cases"] <= len(left) for r in rows("paired_differences"))
    subset = rows("agreement_subset")[0]
    assert subset["responses"] <= len(left)
