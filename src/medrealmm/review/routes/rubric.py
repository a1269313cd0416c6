"""Rubric review: a physician reads round k, gives structured feedback or approves it.

Feedback is stored through ``medrealmm.rubric`` (the same API the file round trip uses) and
the Refiner is kicked in the background to write round k+1; empty feedback approves R*.
"""

from __future__ import annotations

from itertools import pairwise
from urllib.parse import quote

from fastapi import APIRouter, BackgroundTasks, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from medrealmm.review import audit, cases
from medrealmm.review.context import context_of
from medrealmm.review.guards import CSRF_FIELD, Physician
from medrealmm.review.refining import RefineWorker
from medrealmm.review.routes.common import back_to, form_text, page
from medrealmm.review.rubric_form import NEW_SLOTS, SPLIT_SLOTS, FormError, parse_feedback_form
from medrealmm.rubric import (
    OVERLAP_TAG,
    FeedbackError,
    RoundFeedback,
    RubricState,
    approve,
    diff_rubrics,
    load_feedback,
    round_history,
    save_feedback,
    state_of,
    states,
)

router = APIRouter(prefix="/rubric")


def _refiner(request: Request) -> RefineWorker:
    refiner = context_of(request).refiner
    assert refiner is not None, "the app mounts these screens only with medrealmm.rubric"
    return refiner


STATE_LABELS = {
    RubricState.NOT_GENERATED: "尚未生成",
    RubricState.FAILED: "修订失败，可重试",
    RubricState.AWAITING_REVIEW: "待医生审阅",
    RubricState.AWAITING_REFINEMENT: "Refiner 修订中",
    RubricState.MAX_ROUNDS: "已达最大轮数，未批准",
    RubricState.APPROVED: "已批准",
}


@router.get("", name="rubric_queue")
async def rubric_queue(request: Request, user: Physician) -> HTMLResponse:
    ctx = context_of(request)
    found = states(ctx.store, _refiner(request).rubric_settings)
    order = {state: i for i, state in enumerate(STATE_LABELS)}
    rows = sorted(
        found.items(),
        key=lambda kv: (kv[1] is not RubricState.AWAITING_REVIEW, order[kv[1]], kv[0]),
    )
    left = (sum(state is RubricState.AWAITING_REVIEW for _, state in rows), len(rows))
    return page(request, "rubric_queue.html", rows=rows, labels=STATE_LABELS, left=left)


def _waiting(request: Request, instance_id: str) -> list[str]:
    """The rubrics other than ``instance_id`` awaiting a physician, by id: the first is where
    "skip" and save-and-next go."""
    found = states(context_of(request).store, _refiner(request).rubric_settings)
    return sorted(
        iid
        for iid, state in found.items()
        if state is RubricState.AWAITING_REVIEW and iid != instance_id
    )


def _after_saving(request: Request, instance_id: str, form: dict[str, str]) -> Response:
    """Save-and-next goes to the next rubric awaiting review (the queue when none is left);
    a plain save stays on this rubric to watch the Refiner's next round."""
    if form.get("then") == "next":
        waiting = _waiting(request, instance_id)
        if not waiting:
            return back_to(str(request.url_for("rubric_queue")), "saved")
        url = request.url_for("rubric_review", instance_id=quote(waiting[0], safe=""))
        return back_to(str(url), "saved")
    return back_to(str(request.url_for("rubric_review", instance_id=instance_id)), "saved")


def _review_page(
    request: Request, instance_id: str, *, error: str = "", form: dict[str, str] | None = None
) -> HTMLResponse:
    ctx = context_of(request)
    try:
        instance = cases.load_instance(ctx.store, instance_id)
    except cases.CaseNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    rounds = round_history(ctx.store, instance_id)
    if not rounds:
        raise HTTPException(404, f"no rubric for {instance_id!r} yet")
    state = state_of(ctx.store, instance_id, _refiner(request).rubric_settings)
    diffs = [None, *(diff_rubrics(a, b) for a, b in pairwise(rounds))]
    waiting = _waiting(request, instance_id)
    past = [
        (rubric, load_feedback(ctx.store, instance_id, rubric.round), diff)
        for rubric, diff in zip(rounds, diffs, strict=True)
    ]
    return page(
        request,
        "rubric_review.html",
        status_code=400 if error else 200,
        case=cases.instance_view(instance),
        target_reply=instance.target_reply,
        current=rounds[-1],
        state=state,
        states=RubricState,
        label=STATE_LABELS[state],
        past=list(reversed(past)),
        overlap_tag=OVERLAP_TAG,
        split_slots=range(1, SPLIT_SLOTS + 1),
        new_slots=range(1, NEW_SLOTS + 1),
        form=form or {},
        error=error,
        next_review=waiting[0] if waiting else None,
        waiting_count=len(waiting) + (state is RubricState.AWAITING_REVIEW),
    )


@router.get("/{instance_id}", name="rubric_review")
async def rubric_review(request: Request, instance_id: str, user: Physician) -> HTMLResponse:
    return _review_page(request, instance_id)


async def _form(request: Request) -> dict[str, str]:
    form = await request.form()
    return {k: v for k, v in form.items() if isinstance(v, str) and k != CSRF_FIELD}


def _round_of(form: dict[str, str]) -> int:
    try:
        round_ = int(form.get("round", ""))
    except ValueError:
        raise HTTPException(400, "the form lacks the round it was about") from None
    if not 0 <= round_ < 1_000:
        raise HTTPException(400, f"round {round_} is not a rubric round")
    return round_


@router.post("/{instance_id}/feedback", name="rubric_feedback")
async def rubric_feedback(
    request: Request, instance_id: str, user: Physician, background: BackgroundTasks
) -> Response:
    ctx = context_of(request)
    form = await _form(request)
    round_ = _round_of(form)
    rounds = round_history(ctx.store, instance_id)
    current = rounds[-1] if rounds else None
    if current is None or current.round != round_:
        return _review_page(request, instance_id, error="该量表已更新，请查看最新一轮后再提交。")
    try:
        items = parse_feedback_form(current, form)
        if not items:
            raise FormError("form", "没有任何修改；如无需修改，请点击“批准”")
        feedback = RoundFeedback(
            instance_id=instance_id,
            round=round_,
            reviewer=user.username,
            items=items,
            note=form_text(form, "note"),
        )
        save_feedback(ctx.store, feedback)
    except (FormError, FeedbackError) as exc:
        return _review_page(request, instance_id, error=str(exc), form=form)
    audit.record(
        ctx.db,
        user.username,
        "rubric_feedback",
        instance_id,
        {"round": round_, "items": [i.type.value for i in items]},
    )
    background.add_task(_refiner(request).kick)
    return _after_saving(request, instance_id, form)


@router.post("/{instance_id}/approve", name="rubric_approve")
async def rubric_approve(request: Request, instance_id: str, user: Physician) -> Response:
    ctx = context_of(request)
    form = await _form(request)
    round_ = _round_of(form)
    try:
        approve(ctx.store, instance_id, user.username, round_=round_, note=form_text(form, "note"))
    except FeedbackError as exc:
        return _review_page(request, instance_id, error=str(exc))
    audit.record(ctx.db, user.username, "rubric_approved", instance_id, {"round": round_})
    return _after_saving(request, instance_id, form)


@router.post("/{instance_id}/refine", name="rubric_refine")
async def rubric_refine(
    request: Request, instance_id: str, user: Physician, background: BackgroundTasks
) -> Response:
    """Retry the Refiner after a failed attempt (it also runs by itself after feedback)."""
    ctx = context_of(request)
    audit.record(ctx.db, user.username, "rubric_refine_requested", instance_id)
    background.add_task(_refiner(request).kick)
    return back_to(str(request.url_for("rubric_review", instance_id=instance_id)))
