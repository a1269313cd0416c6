"""The Φ_rev queue as one reviewer sees it: ``medrealmm.corpus.review`` holds the tasks and
decisions; this only decides which open tasks a reviewer may take.

An audit task is never offered to the annotator who made the primary decision it audits.
"""

from __future__ import annotations

from dataclasses import dataclass

from medrealmm.corpus.review import (
    ReviewDecision,
    ReviewRound,
    ReviewTask,
    decisions,
    task_key,
    tasks,
)
from medrealmm.store import RunStore


@dataclass(frozen=True)
class QueueRow:
    task: ReviewTask
    decision: ReviewDecision | None
    blocked: bool  # this reviewer made the primary decision an audit task checks


def primary_reviewer(task: ReviewTask, decided: dict[str, ReviewDecision]) -> str | None:
    if task.round is not ReviewRound.AUDIT:
        return None
    primary = decided.get(task_key(task.consultation_id, task.review_pass, ReviewRound.PRIMARY))
    return primary.reviewer if primary else None


def queue_for(store: RunStore, reviewer: str, *, include_decided: bool = False) -> list[QueueRow]:
    """Open tasks this reviewer may decide (audits of others' work first), then, if asked,
    decided ones for reference."""
    decided = decisions(store)
    rows: list[QueueRow] = []
    for task in tasks(store):
        decision = decided.get(task.key)
        blocked = primary_reviewer(task, decided) == reviewer
        if decision is None and blocked:
            continue
        if decision is not None and not include_decided:
            continue
        rows.append(QueueRow(task, decision, blocked))
    rows.sort(
        key=lambda r: (
            r.decision is not None,
            r.task.round is not ReviewRound.AUDIT,
            r.task.consultation_id,
            r.task.review_pass.value,
        )
    )
    return rows
