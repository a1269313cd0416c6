"""Consultation and instance views (turns, images, masked spans highlighted) and image files."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse

from medrealmm.review import cases
from medrealmm.review.context import context_of
from medrealmm.review.guards import CaseReader
from medrealmm.review.routes.common import page

router = APIRouter()


@router.get("/consultations/{stage}/{key}", name="consultation")
async def consultation(request: Request, stage: str, key: str, user: CaseReader) -> HTMLResponse:
    try:
        view = cases.load_consultation(context_of(request).store, stage, key)
    except cases.CaseNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    return page(request, "case.html", case=view)


@router.get("/instances/{instance_id}", name="instance")
async def instance(request: Request, instance_id: str, user: CaseReader) -> HTMLResponse:
    try:
        found = cases.load_instance(context_of(request).store, instance_id)
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
    try:
        path = cases.image_path(context_of(request).store, stage, key, event, image)
    except cases.CaseNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    return FileResponse(path)
