"""Account management and the audit log, for admins only."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from medrealmm.review import audit
from medrealmm.review.accounts import AccountError, Role, create_user, list_users, parse_roles
from medrealmm.review.context import context_of
from medrealmm.review.guards import Admin
from medrealmm.review.routes.common import back_to, form_text, page

router = APIRouter(prefix="/admin")


@router.get("/users", name="admin_users")
async def users(request: Request, user: Admin) -> HTMLResponse:
    return page(
        request,
        "admin_users.html",
        users=list_users(context_of(request).db),
        roles=list(Role),
        error="",
    )


@router.post("/users", name="admin_add_user")
async def add_user(request: Request, user: Admin) -> Response:
    ctx = context_of(request)
    form = await request.form()
    username = form_text(form, "username")
    password = form.get("password")
    try:
        roles = parse_roles([str(r) for r in form.getlist("roles")])
        create_user(ctx.db, username, password if isinstance(password, str) else "", roles)
    except AccountError as exc:
        return page(
            request,
            "admin_users.html",
            status_code=400,
            users=list_users(ctx.db),
            roles=list(Role),
            error=str(exc),
        )
    audit.record(
        ctx.db, user.username, "user_added", username, {"roles": sorted(r.value for r in roles)}
    )
    return back_to(str(request.url_for("admin_users")), "saved")


@router.get("/audit", name="admin_audit")
async def audit_log(request: Request, user: Admin) -> HTMLResponse:
    return page(request, "audit.html", entries=audit.entries(context_of(request).db))
