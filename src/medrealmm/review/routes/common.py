"""Rendering helpers shared by the routers."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from medrealmm.review import audit
from medrealmm.review.cases import CaseView
from medrealmm.review.context import context_of
from medrealmm.store import stages


def log_case_view(request: Request, case: CaseView) -> None:
    """Every page showing a case's text writes one view row, named after its route, so the
    audit log answers "who read this case" without each route remembering to."""
    user = getattr(request.state, "user", None)
    route = request.scope.get("route")
    name = getattr(route, "name", None) or request.url.path
    # an instance is named by its id alone, a consultation by its stage and key
    target = case.key if case.stage == stages.MCCP_INSTANCE else f"{case.stage}/{case.key}"
    audit.record(context_of(request).db, user.username if user else "-", f"view_{name}", target)


def page(request: Request, template: str, status_code: int = 200, **values: Any) -> HTMLResponse:
    """Render ``template`` with the current user and their CSRF token in scope; a page
    showing a case (``case=``) is logged as a view of it."""
    if isinstance(values.get("case"), CaseView):
        log_case_view(request, values["case"])
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
