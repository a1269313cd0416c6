"""Rendering helpers shared by the routers."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from medrealmm.review.context import context_of


def page(request: Request, template: str, status_code: int = 200, **values: Any) -> HTMLResponse:
    """Render ``template`` with the current user and their CSRF token in scope."""
    values.setdefault("user", getattr(request.state, "user", None))
    values.setdefault("csrf", getattr(request.state, "csrf", ""))
    values.setdefault("notice", request.query_params.get("notice", ""))
    return context_of(request).templates.TemplateResponse(
        request, template, values, status_code=status_code
    )


def back_to(url: str, notice: str = "") -> RedirectResponse:
    """Post/redirect/get: a reload never resubmits a decision."""
    if notice:
        url += ("&" if "?" in url else "?") + f"notice={notice}"
    return RedirectResponse(url, status_code=303)


def form_text(form: Any, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""
