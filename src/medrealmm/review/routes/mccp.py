"""MCCP validation (paper 6.3): physicians accept or reject sampled MCCPs; decisions and the
sample live in ``medrealmm.mccp.validation``, which also reports the acceptance rate."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from medrealmm.mccp.validation import (
    ValidationDecision,
    decision_key,
    draw_validation_sample,
    record_decision,
    summarize_validation,
    validation_sample,
)
from medrealmm.review import audit, cases
from medrealmm.review.context import context_of
from medrealmm.review.guards import Physician
from medrealmm.review.routes.common import back_to, form_text, page
from medrealmm.store import stages

router = APIRouter(prefix="/mccp")
DEFAULT_SAMPLE = 200  # the paper validates 200 MCCPs


def default_sample(instances: int) -> int:
    """The paper's 200, or every instance when a run has fewer (a sample cannot be larger)."""
    return min(DEFAULT_SAMPLE, instances) if instances else DEFAULT_SAMPLE


def _mine(request: Request, reviewer: str, instance_id: str) -> ValidationDecision | None:
    return context_of(request).store.get(
        stages.MCCP_VALIDATION, decision_key(reviewer, instance_id), ValidationDecision
    )


def _left(request: Request, reviewer: str) -> tuple[tuple[int, int], str | None]:
    """("N of M left" over the sample, the first sampled instance this physician has not
    decided), for the progress line and save-and-next."""
    sample = validation_sample(context_of(request).store)
    open_ids = [iid for iid in sample if _mine(request, reviewer, iid) is None]
    return (len(open_ids), len(sample)), (open_ids[0] if open_ids else None)


@router.get("", name="mccp_queue")
async def mccp_queue(request: Request, user: Physician) -> HTMLResponse:
    ctx = context_of(request)
    sample = validation_sample(ctx.store)
    rows = [(iid, _mine(request, user.username, iid)) for iid in sample]
    instances = ctx.store.count(stages.MCCP_INSTANCE)
    return page(
        request,
        "mccp_queue.html",
        rows=rows,
        summary=summarize_validation(ctx.store),
        instances=instances,
        default_n=default_sample(instances),
        left=(sum(d is None for _, d in rows), len(rows)),
    )


@router.post("", name="mccp_draw")
async def mccp_draw(request: Request, user: Physician) -> Response:
    """Draw the seeded validation sample (only while none is drawn: every reviewer sees one N)."""
    ctx = context_of(request)
    if validation_sample(ctx.store):
        raise HTTPException(409, "验证样本已抽取，不能重抽。")
    form = await request.form()
    try:
        n = int(form_text(form, "n") or default_sample(ctx.store.count(stages.MCCP_INSTANCE)))
        seed = int(form_text(form, "seed") or 0)
        drawn = draw_validation_sample(ctx.store, n, seed)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    audit.record(ctx.db, user.username, "mccp_sample_drawn", "", {"n": n, "seed": seed})
    return back_to(str(request.url_for("mccp_queue")), "saved" if drawn else "")


@router.get("/{instance_id}", name="mccp_review")
async def mccp_review(request: Request, instance_id: str, user: Physician) -> HTMLResponse:
    ctx = context_of(request)
    try:
        instance = cases.load_instance(ctx.store, instance_id)
    except cases.CaseNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    return page(
        request,
        "mccp_review.html",
        instance=instance,
        case=cases.instance_view(instance),
        decision=_mine(request, user.username, instance_id),
        left=_left(request, user.username)[0],
    )


@router.post("/{instance_id}", name="mccp_decide")
async def mccp_decide(request: Request, instance_id: str, user: Physician) -> Response:
    ctx = context_of(request)
    form = await request.form()
    choice = form_text(form, "decision")
    if choice not in ("accept", "reject"):
        raise HTTPException(400, "请选择“接受”或“拒绝”。")
    try:
        record_decision(
            ctx.store, instance_id, user.username, choice == "accept", form_text(form, "note")
        )
    except KeyError as exc:
        raise HTTPException(404, str(exc)) from None
    audit.record(ctx.db, user.username, "mccp_validation", instance_id, {"decision": choice})
    following = _left(request, user.username)[1]
    if form_text(form, "then") == "next" and following is not None:
        url = request.url_for("mccp_review", instance_id=quote(following, safe=""))
        return back_to(str(url), "saved")
    return back_to(str(request.url_for("mccp_queue")), "saved")
