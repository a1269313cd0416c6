"""De-identification verification (Φ_rev): residual-PII and clinical-utility passes, and the
second annotator's audit, decided per task and stored through ``medrealmm.corpus.review``."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from medrealmm.corpus import ReviewConfig, load_config
from medrealmm.corpus.review import (
    AddedBox,
    AddedSpan,
    ReviewDecision,
    ReviewError,
    ReviewPass,
    ReviewTask,
    ReviewVerdict,
    advance,
    check_added_boxes,
    check_added_spans,
    decisions,
    status,
)
from medrealmm.corpus.review import record as record_decision
from medrealmm.deid.spans import EntityType
from medrealmm.review import audit, cases
from medrealmm.review.context import ReviewContext, context_of
from medrealmm.review.deid_queue import (
    QueueFilter,
    next_open,
    primary_reviewer,
    queue_for,
    queue_page,
    task_title,
)
from medrealmm.review.guards import Reviewer
from medrealmm.review.highlight import suspect_title
from medrealmm.review.routes.common import back_to, form_text, page
from medrealmm.review.suspects import (
    image_suspects_of,
    masked_boxes_of,
    parse_marks,
    suspects_of,
)
from medrealmm.store import stages

router = APIRouter(prefix="/deid")

PASS_GUIDE = {
    ReviewPass.PII: (
        "残留隐私检查：脱敏后的文本与图片中是否仍有可识别信息（姓名、证件号、电话、医院、"
        "病历号/医保号、区县以下地址、完整日期、网址、订单号；图片中的人脸、姓名、条码、"
        "二维码、签名、DICOM 叠加信息、可识别背景）。有任何残留即“不通过”。"
    ),
    ReviewPass.UTILITY: (
        "临床可用性检查：脱敏是否保留了临床信息（症状、病史、检查数值、图像中的病灶仍可判读）。"
        "遮挡破坏了诊断所需信息即“不通过”。"
    ),
}


#: What the type picker shows for each placeholder type.
ENTITY_LABELS = {
    "NAME": "姓名",
    "ID": "证件号",
    "PHONE": "电话",
    "EMAIL": "邮箱",
    "URL": "网址",
    "ORDER_ID": "订单号",
    "MRN": "病历号/医保号",
    "HOSPITAL": "医院",
    "ORG": "单位/学校",
    "ADDRESS": "地址（区县以下）",
    "DATE": "完整日期",
}


def parse_added_spans(values: list[str]) -> list[AddedSpan]:
    """``event:start:end:TYPE`` fields of the form (ValueError on a malformed one)."""
    spans = []
    for value in values:
        event, start, end, kind = value.split(":")
        spans.append(AddedSpan(event=int(event), start=int(start), end=int(end), type=kind))
    return spans


def parse_added_boxes(values: list[str]) -> list[AddedBox]:
    """``event:image:x:y:width:height`` fields (fractions of the image; ValueError)."""
    boxes = []
    for value in values:
        event, image, x, y, width, height = value.split(":")
        boxes.append(
            AddedBox(
                event=int(event),
                image=int(image),
                x=float(x),
                y=float(y),
                width=float(width),
                height=float(height),
            )
        )
    return boxes


def review_config(ctx: ReviewContext) -> ReviewConfig:
    return load_config(ctx.settings.corpus_config).review


@router.get("", name="deid_queue")
async def deid_queue(request: Request, user: Reviewer) -> HTMLResponse:
    ctx = context_of(request)
    wanted = QueueFilter.from_query(request.query_params)
    found = queue_page(ctx.store, user.username, wanted)
    return page(
        request,
        "deid_queue.html",
        queue=found,
        wanted=wanted,
        titles={row.task.key: _title(ctx, row.task) for row in found.rows},
        summary=status(ctx.store),
    )


def _title(ctx: ReviewContext, task: ReviewTask) -> str:
    try:
        events = cases.events_of(ctx.store, task.source_stage, task.consultation_id)
    except cases.CaseNotFound:
        return task_title(task, 0, 0)
    return task_title(task, len(events), sum(len(e.images) for e in events))


def _left(ctx: ReviewContext, reviewer: str) -> tuple[int, int]:
    """(open tasks this reviewer may decide, all tasks): the "N of M left" line."""
    rows = queue_for(ctx.store, reviewer, include_decided=True)
    return sum(row.decision is None for row in rows), len(rows)


def _task(request: Request, key: str) -> ReviewTask:
    found = context_of(request).store.get(stages.CORPUS_REVIEW_TASK, key, ReviewTask)
    if found is None:
        raise HTTPException(404, f"没有核查任务 {key}。")
    return found


def _task_page(request: Request, key: str, user: Reviewer, error: str = "") -> HTMLResponse:
    ctx = context_of(request)
    task = _task(request, key)
    decided = decisions(ctx.store)
    try:
        case = cases.load_consultation(ctx.store, task.source_stage, task.consultation_id)
    except cases.CaseNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    suspects = suspects_of(ctx.store, task)
    image_suspects = image_suspects_of(ctx.store, task)
    return page(
        request,
        "deid_task.html",
        status_code=400 if error else 200,
        task=task,
        title=task_title(task, len(case.events), sum(len(e.images) for e in case.events)),
        left=_left(ctx, user.username),
        next_task=next_open(ctx.store, user.username, task.key),
        case=case,
        guide=PASS_GUIDE[task.review_pass],
        decision=decided.get(task.key),
        own_primary=primary_reviewer(task, decided) == user.username,
        error=error,
        suspects=suspects,
        image_suspects=image_suspects,
        # the count the reviewer works down: suspect spans in the text, near-misses on images
        suspect_counts=(
            sum(map(len, suspects.values())),
            sum(len(found.boxes) for found in image_suspects.values()),
        ),
        masked_boxes=masked_boxes_of(ctx.store, task),
        suspect_title=suspect_title,
        entity_types=list(EntityType),
        entity_labels=ENTITY_LABELS,
    )


@router.get("/{key}", name="deid_task")
async def deid_task(request: Request, key: str, user: Reviewer) -> HTMLResponse:
    return _task_page(request, key, user)


@router.post("/{key}", name="deid_decide")
async def deid_decide(request: Request, key: str, user: Reviewer) -> Response:
    ctx = context_of(request)
    task = _task(request, key)
    form = await request.form()
    try:
        verdict = ReviewVerdict(form_text(form, "verdict"))
    except ValueError:
        return _task_page(request, key, user, "请选择“通过”或“不通过”。")
    note = form_text(form, "note")
    if verdict is ReviewVerdict.REJECT and not note:
        return _task_page(request, key, user, "“不通过”需要写明原因。")
    values = [v for v in form.getlist("mask_suspect") if isinstance(v, str)]
    try:
        marks = parse_marks(values, suspects_of(ctx.store, task))
    except ValueError:
        return _task_page(request, key, user, "勾选的高亮不在本页，请刷新后重试。")
    try:
        added = parse_added_spans([v for v in form.getlist("add_span") if isinstance(v, str)])
        case = cases.load_consultation(ctx.store, task.source_stage, task.consultation_id)
        check_added_spans([e.content for e in case.events], added)
    except (ValueError, cases.CaseNotFound):
        return _task_page(request, key, user, "补充的隐私片段与原文不符，请刷新后重新选择。")
    try:
        boxes = parse_added_boxes([v for v in form.getlist("add_box") if isinstance(v, str)])
        check_added_boxes(case.events, boxes)
        for box in boxes:  # the image the final copy is painted from exists
            cases.image_path(
                ctx.store, task.source_stage, task.consultation_id, box.event, box.image
            )
    except (ValueError, cases.CaseNotFound):
        return _task_page(request, key, user, "图片上的遮挡框无效，请刷新后重新框选。")
    try:
        decision = ReviewDecision(
            task_key=task.key,
            reviewer=user.username,
            verdict=verdict,
            note=note,
            masked_suspects=marks,
            added_spans=added,
            added_boxes=boxes,
        )
        record_decision(ctx.store, decision)
    except ReviewError as exc:
        return _task_page(request, key, user, str(exc))
    advance(ctx.store, review_config(ctx))
    audit.record(
        ctx.db,
        user.username,
        "deid_decision",
        task.key,
        {
            "pass": task.review_pass.value,
            "round": task.round.value,
            "verdict": verdict.value,
            **({"suspects_masked": len(marks)} if marks else {}),
            **({"spans_added": [s.type.value for s in added]} if added else {}),
            **({"boxes_added": len(boxes)} if boxes else {}),
        },
    )
    if form_text(form, "then") == "next":
        following = next_open(ctx.store, user.username, task.key)
        if following is not None:
            url = request.url_for("deid_task", key=quote(following.key, safe=""))
            return back_to(str(url), "saved")
    return back_to(str(request.url_for("deid_queue")), "saved")
