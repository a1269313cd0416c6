"""Panel grading screens: a physician gives a binary verdict per criterion for a model response."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from medrealmm.review import audit, cases, panel
from medrealmm.review.context import context_of
from medrealmm.review.guards import Physician
from medrealmm.review.routes.common import back_to, form_text, page
from medrealmm.schema import Response as ModelResponse
from medrealmm.schema import Rubric

router = APIRouter(prefix="/panel")
VERDICT_VALUES = {"yes": True, "no": False}


def _load(request: Request, response_key: str) -> tuple[ModelResponse, Rubric]:
    store = context_of(request).store
    response = panel.load_response(store, response_key)
    rubric = cases.rubric_for(store, response.instance_id) if response else None
    if response is None or rubric is None or response.text is None:
        raise HTTPException(404, "没有可评分的回复。")
    return response, rubric


def _left(request: Request, reviewer: str, current: str = "") -> tuple[tuple[int, int], str | None]:
    """("N of M left", the next response this physician has not finished after ``current``)."""
    items = panel.queue(context_of(request).store, reviewer)
    open_keys = [item.response_key for item in items if not item.done]
    following = next((key for key in open_keys if key != current), None)
    return (len(open_keys), len(items)), following


@router.get("", name="panel_queue")
async def panel_queue(request: Request, user: Physician) -> HTMLResponse:
    items = panel.queue(context_of(request).store, user.username)
    left = (sum(not item.done for item in items), len(items))
    return page(request, "panel_queue.html", items=items, left=left)


@router.get("/{response_key:path}", name="panel_form")
async def panel_form(request: Request, response_key: str, user: Physician) -> HTMLResponse:
    ctx = context_of(request)
    response, rubric = _load(request, response_key)
    try:
        instance = cases.load_instance(ctx.store, response.instance_id)
    except cases.CaseNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    return page(
        request,
        "panel_form.html",
        response_key=response_key,
        response=response,
        rubric=rubric,
        case=cases.instance_view(instance),
        verdicts=panel.existing_verdicts(ctx.store, user.username, response_key, rubric),
        left=_left(request, user.username)[0],
    )


@router.post("/{response_key:path}", name="panel_submit")
async def panel_submit(request: Request, response_key: str, user: Physician) -> Response:
    ctx = context_of(request)
    _, rubric = _load(request, response_key)
    form = await request.form()
    values: dict[str, bool] = {}
    rationales: dict[str, str] = {}
    for criterion in rubric.criteria:
        choice = form_text(form, f"verdict:{criterion.id}")
        if choice in VERDICT_VALUES:
            values[criterion.id] = VERDICT_VALUES[choice]
            rationales[criterion.id] = form_text(form, f"rationale:{criterion.id}")
        elif choice:
            raise HTTPException(400, f"标准 {criterion.id} 的评分只能是“满足”或“不满足”。")
    saved = panel.save_verdicts(ctx.store, user.username, response_key, rubric, values, rationales)
    audit.record(
        ctx.db,
        user.username,
        "panel_verdicts",
        response_key,
        {"criteria": {cid: values[cid] for cid in saved}},
    )
    following = _left(request, user.username, response_key)[1]
    if form_text(form, "then") == "next" and following is not None:
        return back_to(str(request.url_for("panel_form", response_key=following)), "saved")
    return back_to(str(request.url_for("panel_form", response_key=response_key)), "saved")
