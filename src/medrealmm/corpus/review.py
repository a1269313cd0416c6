"""Φ_rev: the human review queue, kept in the run store so the CLI and the web app share it.

Every case from the de-identified corpus gets two primary tasks: a residual-PII pass and a
clinical-utility pass; high-sensitivity departments are flagged for review in full. Once
every primary task is decided, a second annotator audits a seeded 10% sample of approved
cases plus every approved high-sensitivity case. A case enters ``corpus.final`` only when
all its tasks approve; an audit rejection overrules the primary approval (privacy first).
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from enum import StrEnum
from itertools import pairwise
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from medrealmm.corpus.config import ReviewConfig
from medrealmm.deid.spans import EntityType
from medrealmm.io import DataError, write_jsonl
from medrealmm.llm import dialogue_text
from medrealmm.schema import Consultation, Event
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import ReviewTaskKey


class ReviewPass(StrEnum):
    PII = "pii"  # residual PII in masked text and images
    UTILITY = "utility"  # masking left the clinical signal intact


class ReviewRound(StrEnum):
    PRIMARY = "primary"
    AUDIT = "audit"


class Scope(StrEnum):
    FULL = "full"  # high-sensitivity: every turn and every image
    STANDARD = "standard"


class ReviewVerdict(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"


def task_key(consultation_id: str, review_pass: ReviewPass, round_: ReviewRound) -> str:
    return ReviewTaskKey(consultation_id, review_pass.value, round_.value).format()


class ReviewTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    consultation_id: str
    department: str
    review_pass: ReviewPass
    round: ReviewRound
    scope: Scope
    sensitivity_group: str | None = None
    source_stage: str


class SuspectMark(BaseModel):
    """A near-miss highlight (``deid.record.Suspect``) a reviewer said is an identifier:
    ``[start, end)`` of the masked turn ``event``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event: int = Field(ge=0)
    start: int = Field(ge=0)
    end: int = Field(gt=0)


class AddedSpan(BaseModel):
    """An identifier de-identification missed, added by a residual-PII reviewer: ``[start,
    end)`` of the masked turn ``event``, masked as ``type``'s placeholder in ``corpus.final``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event: int = Field(ge=0)
    start: int = Field(ge=0)
    end: int = Field(gt=0)
    type: EntityType


class AddedBox(BaseModel):
    """A region of an image de-identification left readable, drawn by a residual-PII reviewer:
    image ``image`` of turn ``event``, as fractions of its width and height. ``corpus.final``
    gets a copy of the image with the region filled."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event: int = Field(ge=0)
    image: int = Field(ge=0)
    x: float = Field(ge=0, le=1)
    y: float = Field(ge=0, le=1)
    width: float = Field(gt=0, le=1)
    height: float = Field(gt=0, le=1)


class ReviewDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_key: str = Field(min_length=1)
    reviewer: str = Field(min_length=1)
    verdict: ReviewVerdict
    note: str = ""
    decided_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    #: Residual-PII pass: the highlighted near-misses the reviewer marked as identifiers (the
    #: others shown were judged safe); both become de-identification dev data.
    masked_suspects: list[SuspectMark] = Field(default_factory=list)
    #: Residual-PII pass: identifiers nothing highlighted, selected and typed by the reviewer.
    added_spans: list[AddedSpan] = Field(default_factory=list)
    #: Residual-PII pass: image regions to mask that de-identification left readable.
    added_boxes: list[AddedBox] = Field(default_factory=list)


class AuditPlan(BaseModel):
    """Whether a primary-approved case goes to the second annotator, and why."""

    model_config = ConfigDict(extra="forbid")

    consultation_id: str
    audited: bool
    why: str = ""  # "high_sensitivity" | "sample" | ""


class ReviewOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    consultation_id: str
    approved: bool
    rejected_by: list[str] = Field(default_factory=list)  # task keys that rejected


class ReviewStatus(BaseModel):
    tasks: dict[str, int]  # "<round>/<pass>" -> total
    decided: dict[str, int]
    audit_planned: int
    audit_disagreements: int
    approved: int
    rejected: int
    pending_cases: int
    added_spans: int = 0  # identifiers reviewers added that de-identification missed
    added_boxes: int = 0  # image regions reviewers masked that de-identification left


class ReviewError(ValueError):
    pass


# -- queue -----------------------------------------------------------------------------
def enqueue(store: RunStore, config: ReviewConfig, source_stage: str = stages.CORPUS_DEID) -> int:
    """Add primary tasks for every case of ``source_stage`` not yet queued; returns how many."""
    existing = store.keys(stages.CORPUS_REVIEW_TASK)
    new: list[tuple[str, ReviewTask]] = []
    for case in store.iter(source_stage, Consultation):
        for review_pass in ReviewPass:
            task = _task(case, review_pass, ReviewRound.PRIMARY, config, source_stage)
            if task.key not in existing:
                new.append((task.key, task))
    store.put_many(stages.CORPUS_REVIEW_TASK, new)
    return len(new)


def tasks(store: RunStore) -> list[ReviewTask]:
    return list(store.iter(stages.CORPUS_REVIEW_TASK, ReviewTask))


def decisions(store: RunStore) -> dict[str, ReviewDecision]:
    return {d.task_key: d for d in store.iter(stages.CORPUS_REVIEW_DECISION, ReviewDecision)}


def pending(store: RunStore) -> list[ReviewTask]:
    done = store.keys(stages.CORPUS_REVIEW_DECISION)
    return [task for task in tasks(store) if task.key not in done]


def record(store: RunStore, decision: ReviewDecision) -> None:
    """Store one decision; an audit must come from someone other than the primary reviewer."""
    task = store.get(stages.CORPUS_REVIEW_TASK, decision.task_key, ReviewTask)
    if task is None:
        raise ReviewError(f"no review task {decision.task_key!r}")
    if store.get(stages.CORPUS_REVIEW_OUTCOME, task.consultation_id, ReviewOutcome):
        raise ReviewError(f"case {task.consultation_id!r} is already finalized")
    if task.round is ReviewRound.AUDIT:
        primary_key = task_key(task.consultation_id, task.review_pass, ReviewRound.PRIMARY)
        primary = store.get(stages.CORPUS_REVIEW_DECISION, primary_key, ReviewDecision)
        if primary is not None and primary.reviewer == decision.reviewer:
            raise ReviewError(
                f"audit of {task.key!r} needs a second annotator, not {decision.reviewer!r}"
            )
    earlier = store.get(stages.CORPUS_REVIEW_DECISION, decision.task_key, ReviewDecision)
    if earlier is not None and earlier.reviewer != decision.reviewer:
        # One decision per task: another reviewer's verdict is never silently replaced (the
        # two-annotator audit rule compares against whoever decided the primary task).
        raise ReviewError(f"task {decision.task_key!r} was already decided by {earlier.reviewer!r}")
    store.put(stages.CORPUS_REVIEW_DECISION, decision.task_key, decision)


# -- progression -----------------------------------------------------------------------
def advance(store: RunStore, config: ReviewConfig) -> ReviewStatus:
    """Plan the audit once all primary tasks are decided; finalize fully decided cases."""
    all_tasks = tasks(store)
    decided = decisions(store)
    primary = [t for t in all_tasks if t.round is ReviewRound.PRIMARY]
    if primary and all(t.key in decided for t in primary):
        _plan_audit(store, config, primary, decided)
        all_tasks = tasks(store)
    _finalize(store, all_tasks, decided)
    return status(store)


def audit_sample(approved: Iterable[str], fraction: float, seed: int) -> set[str]:
    """A seeded sample of ceil(fraction * n) ids; depends only on the set of ids and the seed."""
    pool = sorted(set(approved))
    size = math.ceil(fraction * len(pool) - 1e-9)
    return set(random.Random(f"{seed}|audit").sample(pool, size))


def _plan_audit(
    store: RunStore,
    config: ReviewConfig,
    primary: list[ReviewTask],
    decided: dict[str, ReviewDecision],
) -> None:
    planned = store.keys(stages.CORPUS_REVIEW_AUDIT)
    by_case: dict[str, list[ReviewTask]] = {}
    for task in primary:
        by_case.setdefault(task.consultation_id, []).append(task)
    approved = {
        cid: case_tasks
        for cid, case_tasks in by_case.items()
        if cid not in planned
        and all(decided[t.key].verdict is ReviewVerdict.APPROVE for t in case_tasks)
    }
    if not approved:
        return
    sampled = audit_sample(approved, config.audit_fraction, config.seed)
    plans: list[tuple[str, AuditPlan]] = []
    new_tasks: list[tuple[str, ReviewTask]] = []
    for cid in sorted(approved):
        sensitive = approved[cid][0].sensitivity_group is not None
        why = "high_sensitivity" if sensitive else "sample" if cid in sampled else ""
        plans.append((cid, AuditPlan(consultation_id=cid, audited=bool(why), why=why)))
        if why:
            for task in approved[cid]:
                audit = task.model_copy(
                    update={
                        "round": ReviewRound.AUDIT,
                        "key": task_key(cid, task.review_pass, ReviewRound.AUDIT),
                    }
                )
                new_tasks.append((audit.key, audit))
    store.put_many(stages.CORPUS_REVIEW_TASK, new_tasks)
    store.put_many(stages.CORPUS_REVIEW_AUDIT, plans)


def _finalize(
    store: RunStore, all_tasks: list[ReviewTask], decided: dict[str, ReviewDecision]
) -> None:
    finished = store.keys(stages.CORPUS_REVIEW_OUTCOME)
    planned = store.keys(stages.CORPUS_REVIEW_AUDIT)
    by_case: dict[str, list[ReviewTask]] = {}
    for task in all_tasks:
        by_case.setdefault(task.consultation_id, []).append(task)
    for cid, case_tasks in sorted(by_case.items()):
        primary = [t for t in case_tasks if t.round is ReviewRound.PRIMARY]
        if cid in finished or not all(t.key in decided for t in primary):
            continue
        rejected = [
            t.key
            for t in case_tasks
            if t.key in decided and decided[t.key].verdict is ReviewVerdict.REJECT
        ]
        primary_rejected = any(t.key in rejected for t in primary)
        audit_open = cid not in planned or not all(t.key in decided for t in case_tasks)
        if not primary_rejected and audit_open:
            continue
        outcome = ReviewOutcome(consultation_id=cid, approved=not rejected, rejected_by=rejected)
        store.put(stages.CORPUS_REVIEW_OUTCOME, cid, outcome)
        if outcome.approved:
            source = case_tasks[0].source_stage
            case = store.get(source, cid, Consultation)
            if case is not None:
                added = [
                    s for t in case_tasks if t.key in decided for s in decided[t.key].added_spans
                ]
                boxes = [
                    b for t in case_tasks if t.key in decided for b in decided[t.key].added_boxes
                ]
                case = apply_added_spans(case, added)
                root = store.image_root(source)  # the run's own folder, a copy's too
                if boxes and root is not None:
                    case = apply_added_boxes(case, boxes, root)
                store.put(stages.CORPUS_FINAL, cid, case)


def check_added_spans(texts: list[str], spans: Iterable[AddedSpan]) -> None:
    """A span must lie inside its turn's text (``texts``, one per turn) and not overlap
    another (ValueError)."""
    by_event: dict[int, list[AddedSpan]] = {}
    for span in spans:
        if span.event >= len(texts) or span.end > len(texts[span.event]):
            raise ValueError(f"span {span.event}:{span.start}:{span.end} is outside the text")
        if span.start >= span.end:
            raise ValueError(f"span {span.event}:{span.start}:{span.end} is empty")
        by_event.setdefault(span.event, []).append(span)
    for items in by_event.values():
        items.sort(key=lambda s: s.start)
        for a, b in pairwise(items):
            if b.start < a.end:
                raise ValueError(f"spans {a.start}:{a.end} and {b.start}:{b.end} overlap")


def apply_added_spans(case: Consultation, spans: Iterable[AddedSpan]) -> Consultation:
    """``case`` with each added span replaced by its type's placeholder (right to left, so
    the offsets, which are into the text the reviewer saw, stay valid)."""
    spans = sorted(set(spans), key=lambda s: (s.event, -s.start))
    if not spans:
        return case
    check_added_spans([e.content for e in case.events], spans)
    events = list(case.events)
    for span in spans:
        text = events[span.event].content
        masked = text[: span.start] + span.type.placeholder + text[span.end :]
        events[span.event] = events[span.event].model_copy(update={"content": masked})
    return case.model_copy(update={"events": events})


#: Where reviewed copies of images go, inside the de-identified images' own folder.
REVIEWED_FOLDER = "reviewed"


def check_added_boxes(events: list[Event], boxes: Iterable[AddedBox]) -> None:
    """Each box must be on an image of the turns ``events`` and inside it (ValueError)."""
    for box in boxes:
        if box.event >= len(events) or box.image >= len(events[box.event].images):
            raise ValueError(f"box on image {box.event}:{box.image}, which the case lacks")
        if box.x + box.width > 1.0001 or box.y + box.height > 1.0001:
            raise ValueError(f"box on image {box.event}:{box.image} reaches past its edge")


def apply_added_boxes(case: Consultation, boxes: Iterable[AddedBox], root: Path) -> Consultation:
    """``case`` whose boxed images are copies under ``root/reviewed/<case>/`` with the boxes
    filled black; the masked originals (written by de-identification) are left as they are."""
    from PIL import Image, ImageDraw

    from medrealmm.io.images import resolve_image

    by_image: dict[tuple[int, int], list[AddedBox]] = {}
    for box in boxes:
        by_image.setdefault((box.event, box.image), []).append(box)
    check_added_boxes(case.events, [b for group in by_image.values() for b in group])
    events = list(case.events)
    for (event, index), group in sorted(by_image.items()):
        ref = events[event].images[index]
        relative = Path(REVIEWED_FOLDER) / case.id / f"{event}-{index}.png"
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        with Image.open(resolve_image(root, ref)) as image:
            painted = image.convert("RGB")
        draw = ImageDraw.Draw(painted)
        w, h = painted.size
        for b in group:
            draw.rectangle(
                (b.x * w, b.y * h, (b.x + b.width) * w, (b.y + b.height) * h), fill="black"
            )
        painted.save(target)
        images = list(events[event].images)
        images[index] = ref.model_copy(update={"path": relative.as_posix(), "sha256": None})
        events[event] = events[event].model_copy(update={"images": images})
    return case.model_copy(update={"events": events})


def status(store: RunStore) -> ReviewStatus:
    all_tasks = tasks(store)
    decided = decisions(store)
    totals: Counter[str] = Counter()
    done: Counter[str] = Counter()
    for task in all_tasks:
        label = f"{task.round.value}/{task.review_pass.value}"
        totals[label] += 1
        done[label] += task.key in decided
    disagreements = 0
    for task in all_tasks:
        if task.round is ReviewRound.AUDIT and task.key in decided:
            key = task_key(task.consultation_id, task.review_pass, ReviewRound.PRIMARY)
            primary = decided.get(key)
            disagreements += primary is not None and primary.verdict != decided[task.key].verdict
    outcomes = list(store.iter(stages.CORPUS_REVIEW_OUTCOME, ReviewOutcome))
    approved = sum(o.approved for o in outcomes)
    cases = {task.consultation_id for task in all_tasks}
    return ReviewStatus(
        tasks=dict(sorted(totals.items())),
        decided=dict(sorted(done.items())),
        audit_planned=sum(
            plan.audited for plan in store.iter(stages.CORPUS_REVIEW_AUDIT, AuditPlan)
        ),
        audit_disagreements=disagreements,
        approved=approved,
        rejected=len(outcomes) - approved,
        pending_cases=len(cases) - len(outcomes),
        added_spans=sum(len(d.added_spans) for d in decided.values()),
        added_boxes=sum(len(d.added_boxes) for d in decided.values()),
    )


def _task(
    case: Consultation,
    review_pass: ReviewPass,
    round_: ReviewRound,
    config: ReviewConfig,
    source_stage: str,
) -> ReviewTask:
    group = config.sensitivity_group(case.department)
    return ReviewTask(
        key=task_key(case.id, review_pass, round_),
        consultation_id=case.id,
        department=case.department,
        review_pass=review_pass,
        round=round_,
        scope=Scope.FULL if group else Scope.STANDARD,
        sensitivity_group=group,
        source_stage=source_stage,
    )


# -- exchange files ----------------------------------------------------------------------
class SheetRow(BaseModel):
    """One exported task; reviewers fill ``reviewer``, ``verdict`` and ``note`` and import it.

    ``dialogue`` and ``images`` are included only from the de-identified corpus.
    """

    model_config = ConfigDict(extra="forbid")

    task_key: str
    consultation_id: str
    department: str
    review_pass: ReviewPass
    round: ReviewRound
    scope: Scope
    reviewer: str = ""
    verdict: ReviewVerdict | None = None
    note: str = ""
    dialogue: str | None = None
    images: list[str] = Field(default_factory=list)


class DecisionRow(BaseModel):
    """What import reads: an exported row with its decision filled in (other fields ignored)."""

    model_config = ConfigDict(extra="ignore")

    task_key: str = Field(min_length=1)
    reviewer: str = ""
    verdict: ReviewVerdict | None = None
    note: str = ""
    decided_at: datetime | None = None


def export_sheet(store: RunStore, path: Path | str, *, include_decided: bool = False) -> int:
    decided = decisions(store)
    rows: list[SheetRow] = []
    for task in tasks(store):
        decision = decided.get(task.key)
        if decision is not None and not include_decided:
            continue
        case = None
        if task.source_stage == stages.CORPUS_DEID:
            case = store.get(task.source_stage, task.consultation_id, Consultation)
        rows.append(
            SheetRow(
                task_key=task.key,
                consultation_id=task.consultation_id,
                department=task.department,
                review_pass=task.review_pass,
                round=task.round,
                scope=task.scope,
                reviewer=decision.reviewer if decision else "",
                verdict=decision.verdict if decision else None,
                note=decision.note if decision else "",
                dialogue=dialogue_text(case.events) if case else None,
                images=[ref.path for e in case.events for ref in e.images] if case else [],
            )
        )
    return write_jsonl(path, rows)


def import_sheet(store: RunStore, path: Path | str) -> int:
    """Record every filled-in row; rows without a verdict are skipped. Errors name the line."""
    path = Path(path)
    count = 0
    for line, row in enumerate_jsonl(path, DecisionRow):
        if row.verdict is None:
            continue
        if not row.reviewer.strip():
            raise DataError(path, line, "reviewer", "a decided row needs the reviewer's name")
        decision = ReviewDecision(
            task_key=row.task_key,
            reviewer=row.reviewer.strip(),
            verdict=row.verdict,
            note=row.note,
            decided_at=row.decided_at or datetime.now(UTC),
        )
        try:
            record(store, decision)
        except ReviewError as exc:
            raise DataError(path, line, "task_key", str(exc)) from None
        count += 1
    return count


def enumerate_jsonl(path: Path, model: type[DecisionRow]) -> Iterator[tuple[int, DecisionRow]]:
    """Validated rows with their 1-based line, so a row that fails later still names its line."""
    with path.open("r", encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                yield number, model.model_validate(json.loads(text))
            except json.JSONDecodeError as exc:
                raise DataError(path, number, "<json>", f"not valid JSON: {exc.msg}") from None
            except ValidationError as exc:
                raise DataError.from_validation(path, number, exc) from None
