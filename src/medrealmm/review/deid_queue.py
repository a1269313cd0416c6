"""The Φ_rev queue as one reviewer sees it: ``medrealmm.corpus.review`` holds the tasks and
decisions; this only decides which open tasks a reviewer may take.

An audit task is never offered to the annotator who made the primary decision it audits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

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


PAGE_SIZE = 25
PASS_LABELS = {"pii": "残留隐私", "utility": "临床可用性"}
ROUND_LABELS = {"primary": "初审", "audit": "抽检"}


@dataclass(frozen=True)
class QueueFilter:
    """What the queue page shows; every field comes from the query string, empty means any."""

    review_pass: str = ""  # pii | utility
    status: str = ""  # open | decided
    mine: bool = False  # only tasks this reviewer decided
    department: str = ""
    page: int = 1

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> QueueFilter:
        try:
            page = max(1, int(query.get("page", "1")))
        except ValueError:
            page = 1
        return cls(
            review_pass=query.get("pass", "") if query.get("pass") in PASS_LABELS else "",
            status=query.get("status", "") if query.get("status") in ("open", "decided") else "",
            mine=query.get("mine") == "1",
            department=query.get("department", "")[:64],
            page=page,
        )

    def keeps(self, row: QueueRow, reviewer: str) -> bool:
        return (
            (not self.review_pass or row.task.review_pass.value == self.review_pass)
            and (not self.status or (row.decision is None) == (self.status == "open"))
            and (not self.mine or (row.decision is not None and row.decision.reviewer == reviewer))
            and (not self.department or row.task.department == self.department)
        )

    def query(self, **changes: object) -> str:
        """This filter as a query string, with ``changes`` (e.g. another page)."""
        values = {
            "pass": self.review_pass,
            "status": self.status,
            "mine": "1" if self.mine else "",
            "department": self.department,
            "page": str(self.page),
        }
        values.update({k: str(v) for k, v in changes.items()})
        return urlencode({k: v for k, v in values.items() if v and not (k == "page" and v == "1")})


@dataclass(frozen=True)
class QueuePage:
    rows: list[QueueRow]
    matching: int  # rows the filter keeps, over all pages
    pages: int
    left: int  # open tasks this reviewer may decide, whatever the filter
    total: int  # all tasks of the queue
    departments: list[str]


def queue_page(store: RunStore, reviewer: str, wanted: QueueFilter) -> QueuePage:
    everything = queue_for(store, reviewer, include_decided=True)
    kept = [row for row in everything if wanted.keeps(row, reviewer)]
    pages = max(1, -(-len(kept) // PAGE_SIZE))
    start = (min(wanted.page, pages) - 1) * PAGE_SIZE
    return QueuePage(
        rows=kept[start : start + PAGE_SIZE],
        matching=len(kept),
        pages=pages,
        left=sum(row.decision is None for row in everything),
        total=len(tasks(store)),
        departments=sorted({row.task.department for row in everything}),
    )


def next_open(store: RunStore, reviewer: str, after: str) -> ReviewTask | None:
    """The open task this reviewer meets next in queue order after ``after`` (from the top
    when ``after`` is not open, e.g. just decided), or None when nothing is left."""
    open_rows = [row.task for row in queue_for(store, reviewer)]
    keys = [task.key for task in open_rows]
    if after in keys:
        index = keys.index(after)
        open_rows = open_rows[index + 1 :] + open_rows[:index]
    return next((task for task in open_rows if task.key != after), None)


def task_title(task: ReviewTask, turns: int, images: int) -> str:
    """What a reviewer reads in the queue instead of the raw key."""
    return (
        f"{task.department} · {turns} 轮 · {images} 图 · "
        f"{PASS_LABELS[task.review_pass.value]}{ROUND_LABELS[task.round.value]}"
    )
