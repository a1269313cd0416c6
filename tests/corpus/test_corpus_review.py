"""Φ_rev: two passes, full review of sensitive departments, seeded second-annotator audit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medrealmm.corpus import ReviewConfig
from medrealmm.corpus import review as queue
from medrealmm.corpus.review import (
    ReviewDecision,
    ReviewError,
    ReviewPass,
    ReviewRound,
    ReviewVerdict,
    Scope,
    task_key,
)
from medrealmm.io import DataError
from medrealmm.store import RunStore, stages

from .conftest import build_case

CONFIG = ReviewConfig(seed=5)
DEPARTMENTS = ["皮肤科"] * 16 + ["内分泌科"] * 4 + ["儿科", "精神心理科", "肿瘤科", "感染科"]


@pytest.fixture()
def store(tmp_path: Path):
    with RunStore(tmp_path) as store:
        cases = [build_case(id=f"c{i:02d}", department=dept) for i, dept in enumerate(DEPARTMENTS)]
        store.put_many(stages.CORPUS_DEID, ((c.id, c) for c in cases))
        yield store


def _decide(store: RunStore, round_: ReviewRound, reviewer: str, reject: set[str] = frozenset()):
    for task in queue.pending(store):
        if task.round is round_:
            verdict = ReviewVerdict.REJECT if task.key in reject else ReviewVerdict.APPROVE
            queue.record(
                store, ReviewDecision(task_key=task.key, reviewer=reviewer, verdict=verdict)
            )


def test_every_case_gets_both_passes_and_sensitive_ones_full_scope(store: RunStore) -> None:
    assert queue.enqueue(store, CONFIG) == 2 * len(DEPARTMENTS)
    assert queue.enqueue(store, CONFIG) == 0  # idempotent
    tasks = queue.tasks(store)
    assert {(t.review_pass, t.round) for t in tasks} == {
        (ReviewPass.PII, ReviewRound.PRIMARY),
        (ReviewPass.UTILITY, ReviewRound.PRIMARY),
    }
    full = {t.department: t.sensitivity_group for t in tasks if t.scope is Scope.FULL}
    assert full == {
        "儿科": "pediatrics",
        "精神心理科": "mental_health",
        "肿瘤科": "oncology",
        "感染科": "infectious_disease",
    }


def test_audit_is_a_seeded_tenth_plus_every_sensitive_case(store: RunStore) -> None:
    queue.enqueue(store, CONFIG)
    rejected = {task_key("c00", ReviewPass.PII, ReviewRound.PRIMARY)}
    _decide(store, ReviewRound.PRIMARY, "reviewer-a", rejected)
    status = queue.advance(store, CONFIG)
    plans = {p.consultation_id: p for p in store.iter(stages.CORPUS_REVIEW_AUDIT, queue.AuditPlan)}
    assert len(plans) == len(DEPARTMENTS) - 1  # every approved case was considered
    sampled = {cid for cid, p in plans.items() if p.why == "sample"}
    sensitive = {cid for cid, p in plans.items() if p.why == "high_sensitivity"}
    assert sampled == queue.audit_sample(set(plans), 0.1, CONFIG.seed) - sensitive
    assert len(queue.audit_sample(set(plans), 0.1, CONFIG.seed)) == 3  # ceil(0.1 * 23)
    assert sensitive == {"c20", "c21", "c22", "c23"}
    assert status.audit_planned == len(sampled | sensitive)
    assert status.tasks["audit/pii"] == status.tasks["audit/utility"] == len(sampled | sensitive)
    assert status.rejected == 1  # c00, rejected by the PII pass, needs no audit
    assert status.approved == len(DEPARTMENTS) - 1 - len(sampled | sensitive)
    again = queue.audit_sample(set(plans), 0.1, CONFIG.seed)
    assert again == queue.audit_sample(sorted(plans, reverse=True), 0.1, CONFIG.seed)


def test_audit_needs_a_second_annotator_and_can_overrule(store: RunStore) -> None:
    queue.enqueue(store, CONFIG)
    _decide(store, ReviewRound.PRIMARY, "reviewer-a")
    queue.advance(store, CONFIG)
    audit = [t for t in queue.pending(store) if t.round is ReviewRound.AUDIT]
    with pytest.raises(ReviewError, match="second annotator"):
        queue.record(
            store,
            ReviewDecision(task_key=audit[0].key, reviewer="reviewer-a", verdict="approve"),
        )
    overruled = {t.key for t in audit if t.consultation_id == "c21" and t.review_pass == "pii"}
    _decide(store, ReviewRound.AUDIT, "reviewer-b", overruled)
    status = queue.advance(store, CONFIG)
    assert status.pending_cases == 0 and status.rejected == 1
    assert status.audit_disagreements == 1
    final = store.keys(stages.CORPUS_FINAL)
    assert "c21" not in final and len(final) == len(DEPARTMENTS) - 1
    with pytest.raises(ReviewError, match="already finalized"):
        queue.record(
            store, ReviewDecision(task_key=audit[0].key, reviewer="reviewer-c", verdict="reject")
        )


def test_another_reviewer_cannot_overwrite_a_primary_decision(store: RunStore) -> None:
    queue.enqueue(store, CONFIG)
    task = queue.pending(store)[0]
    first = ReviewDecision(task_key=task.key, reviewer="reviewer-a", verdict="approve")
    queue.record(store, first)
    with pytest.raises(ReviewError, match="already decided by 'reviewer-a'"):
        queue.record(
            store,
            ReviewDecision(task_key=task.key, reviewer="reviewer-b", verdict="reject", note="x"),
        )
    kept = store.get(stages.CORPUS_REVIEW_DECISION, task.key, ReviewDecision)
    assert kept is not None and kept.reviewer == "reviewer-a"
    queue.record(
        store, first.model_copy(update={"verdict": ReviewVerdict.REJECT, "note": "revised"})
    )


def test_nothing_is_final_before_the_audit_is_planned(store: RunStore) -> None:
    queue.enqueue(store, CONFIG)
    first = queue.pending(store)[:10]
    for task in first:
        queue.record(store, ReviewDecision(task_key=task.key, reviewer="a", verdict="approve"))
    status = queue.advance(store, CONFIG)
    assert status.approved == 0 and status.audit_planned == 0
    assert not store.count(stages.CORPUS_FINAL)


def test_sheet_round_trip(store: RunStore, tmp_path: Path) -> None:
    queue.enqueue(store, CONFIG)
    sheet = tmp_path / "sheet.jsonl"
    assert queue.export_sheet(store, sheet) == 2 * len(DEPARTMENTS)
    rows = [json.loads(line) for line in sheet.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["dialogue"].startswith("[1] 患者：") and rows[0]["verdict"] is None
    for row in rows[:4]:
        row.update(reviewer="医生甲", verdict="approve", note="无残留")
    sheet.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    assert queue.import_sheet(store, sheet) == 4
    assert len(queue.pending(store)) == 2 * len(DEPARTMENTS) - 4
    assert queue.export_sheet(store, tmp_path / "open.jsonl") == 2 * len(DEPARTMENTS) - 4
    assert queue.export_sheet(store, tmp_path / "all.jsonl", include_decided=True) == 48


def test_sheet_errors_name_line_and_field(store: RunStore, tmp_path: Path) -> None:
    queue.enqueue(store, CONFIG)
    sheet = tmp_path / "sheet.jsonl"
    good = {"task_key": "c00|pii|primary", "reviewer": "甲", "verdict": "approve"}
    cases = [
        ({**good, "verdict": "maybe"}, "verdict"),
        ({**good, "reviewer": " "}, "reviewer"),
        ({**good, "task_key": "zz|pii|primary"}, "task_key"),
    ]
    for row, field in cases:
        sheet.write_text(json.dumps(good) + "\n\n" + json.dumps(row) + "\n", encoding="utf-8")
        with pytest.raises(DataError) as info:
            queue.import_sheet(store, sheet)
        assert (info.value.line, info.value.field) == (3, field)
