"""Near-misses in the residual-PII pass: which highlights a case has, which a reviewer said
are identifiers, and those judgements written out as de-identification dev data.

The highlights come from the de-identification record (``deid.record.TurnRecord.suspects``);
the judgements from the PII pass decisions (``ReviewDecision.masked_suspects``). A highlight a
reviewer left unticked on a decided task is a judged negative, so the export holds both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from medrealmm.corpus.review import (
    ReviewPass,
    ReviewTask,
    SuspectMark,
    decisions,
    tasks,
)
from medrealmm.deid.record import DeidRecord, ImageBox, ImageRecord, Suspect
from medrealmm.io import write_jsonl
from medrealmm.review.highlight import near_miss_title
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages


def suspects_of(store: RunStore, task: ReviewTask) -> dict[int, list[Suspect]]:
    """The near-misses to highlight for ``task``, by event: only on the residual-PII pass of
    the de-identified corpus, and only those that still fit the turn they point into."""
    if task.review_pass is not ReviewPass.PII or task.source_stage != stages.CORPUS_DEID:
        return {}
    record = store.get(stages.DEID_RECORD, task.consultation_id, DeidRecord)
    case = store.get(stages.CORPUS_DEID, task.consultation_id, Consultation)
    if record is None or case is None:
        return {}
    out: dict[int, list[Suspect]] = {}
    for turn in record.turns:
        if turn.event < len(case.events):
            size = len(case.events[turn.event].content)
            fitting = [s for s in turn.suspects if s.end <= size]
            if fitting:
                out[turn.event] = fitting
    return out


class ImageHighlights(NamedTuple):
    """An image's near-misses as the page outlines them: rectangles in its own pixels."""

    width: int
    height: int
    boxes: list[tuple[int, int, int, int, str]]  # x, y, width, height, title


def image_suspects_of(store: RunStore, task: ReviewTask) -> dict[str, ImageHighlights]:
    """OCR text left on the task's images that the machine was unsure of, by image path;
    shown on the residual-PII pass only, like ``suspects_of`` (outlined, not tick boxes)."""
    if task.review_pass is not ReviewPass.PII or task.source_stage != stages.CORPUS_DEID:
        return {}
    return _image_highlights(
        store,
        task,
        lambda image: image.near_misses,
        lambda item: near_miss_title(item.label or item.kind),
    )


def parse_marks(values: list[str], shown: dict[int, list[Suspect]]) -> list[SuspectMark]:
    """Form values ``event:start:end`` back into marks; one that was not shown is an error
    (a stale page or a forged form), never silently dropped."""
    offered = {(e, s.start, s.end) for e, items in shown.items() for s in items}
    marks: list[SuspectMark] = []
    for value in values:
        try:
            event, start, end = (int(part) for part in value.split(":"))
        except ValueError:
            raise ValueError(f"unreadable highlight {value!r}") from None
        if (event, start, end) not in offered:
            raise ValueError(f"highlight {value!r} is not on this page")
        marks.append(SuspectMark(event=event, start=start, end=end))
    return marks


class SuspectLabel(BaseModel):
    """One judged near-miss: the masked turn, the span, and whether it is an identifier."""

    model_config = ConfigDict(extra="forbid")

    consultation_id: str
    event: int
    start: int
    end: int
    kind: str
    source: str
    reason: str | None
    span: str
    text: str
    identifier: bool
    reviewer: str
    task_key: str


def suspect_labels(store: RunStore) -> list[SuspectLabel]:
    """Every highlight of every decided residual-PII task, labelled by its reviewer."""
    decided = decisions(store)
    rows: list[SuspectLabel] = []
    for task in tasks(store):
        decision = decided.get(task.key)
        shown = suspects_of(store, task)
        if decision is None or not shown:
            continue
        case = store.get(stages.CORPUS_DEID, task.consultation_id, Consultation)
        assert case is not None  # suspects_of found it
        marked = {(m.event, m.start, m.end) for m in decision.masked_suspects}
        for event, items in sorted(shown.items()):
            text = case.events[event].content
            rows.extend(
                SuspectLabel(
                    consultation_id=task.consultation_id,
                    event=event,
                    start=s.start,
                    end=s.end,
                    kind=s.kind,
                    source=s.source,
                    reason=s.reason,
                    span=text[s.start : s.end],
                    text=text,
                    identifier=(event, s.start, s.end) in marked,
                    reviewer=decision.reviewer,
                    task_key=task.key,
                )
                for s in items
            )
    return rows


def added_span_labels(store: RunStore) -> list[SuspectLabel]:
    """Identifiers reviewers added that nothing highlighted (``ReviewDecision.added_spans``):
    positives the recognizers missed outright, ``kind`` "missed" and the type as ``reason``."""
    rows: list[SuspectLabel] = []
    for task_key, decision in sorted(decisions(store).items()):
        if not decision.added_spans:
            continue
        task = store.get(stages.CORPUS_REVIEW_TASK, task_key, ReviewTask)
        if task is None:
            continue
        case = store.get(task.source_stage, task.consultation_id, Consultation)
        if case is None:
            continue
        for span in decision.added_spans:
            text = case.events[span.event].content
            rows.append(
                SuspectLabel(
                    consultation_id=case.id,
                    event=span.event,
                    start=span.start,
                    end=span.end,
                    kind="missed",
                    source="reviewer",
                    reason=span.type.value,
                    span=text[span.start : span.end],
                    text=text,
                    identifier=True,
                    reviewer=decision.reviewer,
                    task_key=task_key,
                )
            )
    return rows


def export_suspect_labels(store: RunStore, path: Path | str) -> int:
    """Write ``suspect_labels`` and ``added_span_labels`` as JSONL (dev data for the
    recognizers); returns the count."""
    rows = suspect_labels(store) + added_span_labels(store)
    write_jsonl(path, rows)
    return len(rows)


def masked_boxes_of(store: RunStore, task: ReviewTask) -> dict[str, ImageHighlights]:
    """What de-identification blacked on the task's images, by image path, so a reviewer can
    outline the mask (a toggle on the page) and judge whether it covers what it should."""
    if task.source_stage != stages.CORPUS_DEID:
        return {}
    return _image_highlights(
        store, task, lambda image: image.boxes, lambda item: item.label or item.kind
    )


def _image_highlights(
    store: RunStore,
    task: ReviewTask,
    boxes: Callable[[ImageRecord], Sequence[ImageBox]],
    title: Callable[[ImageBox], str],
) -> dict[str, ImageHighlights]:
    """Boxes of the task's images from its de-id record, by image path, each with its title;
    images with none are left out."""
    record = store.get(stages.DEID_RECORD, task.consultation_id, DeidRecord)
    if record is None:
        return {}
    return {
        image.output: ImageHighlights(
            image.width,
            image.height,
            [
                (x0, y0, x1 - x0, y1 - y0, title(item))
                for item in chosen
                for x0, y0, x1, y1 in [item.box]
            ],
        )
        for image in record.images
        if (chosen := boxes(image))
    }
