"""Consultation and instance views (turns, images, masked spans highlighted) and image files."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse

from medrealmm.review import audit, cases
from medrealmm.review.accounts import Role, User
from medrealmm.review.context import context_of
from medrealmm.review.guards import CaseReader
from medrealmm.review.routes.common import page

router = APIRouter()


def _may_see(user: User, stage: str) -> None:
    """Un-masked stages are for de-id reviewers comparing a masked case with its original;
    physicians work on de-identified data only."""
    if stage in cases.UNMASKED_STAGES and Role.REVIEWER not in user.roles:
        raise HTTPException(403, "该阶段数据未脱敏，仅限脱敏审核员查看。")


@router.get("/consultations/{stage}/{key}", name="consultation")
async def consultation(request: Request, stage: str, key: str, user: CaseReader) -> HTMLResponse:
    _may_see(user, stage)
    ctx = context_of(request)
    try:
        view = cases.load_consultation(ctx.store, stage, key)
    except cases.CaseNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    return page(request, "case.html", case=view)


@router.get("/instances/{instance_id}", name="instance")
async def instance(request: Request, instance_id: str, user: CaseReader) -> HTMLResponse:
    ctx = context_of(request)
    try:
        found = cases.load_instance(ctx.store, instance_id)
    except cases.CaseNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    return page(request, "case.html", case=cases.instance_view(found))


@router.get("/images/{stage}/{key}/{event}/{image}", name="image")
async def image(
    request: Request,
    stage: str,
    key: str,
    event: int,
    image: int,
    user: CaseReader,
) -> FileResponse:
    _may_see(user, stage)
    ctx = context_of(request)
    try:
        path = cases.image_path(ctx.store, stage, key, event, image)
    except cases.CaseNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    audit.record(ctx.db, user.username, "view_image", f"{stage}/{key}/{event}/{image}")
    return FileResponse(path)
