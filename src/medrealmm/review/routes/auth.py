"""Login and logout. The login form carries its own CSRF token (double-submit cookie)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from medrealmm.review import audit
from medrealmm.review.accounts import authenticate
from medrealmm.review.context import context_of
from medrealmm.review.guards import CSRF_FIELD, LOGIN_COOKIE, SESSION_COOKIE, AnyUser
from medrealmm.review.routes.common import form_text, page

router = APIRouter()

# Password guessing: after MAX_FAILURES for one account from one client, that client may not
# log in to that account for a while (correct password or not); after MAX_CLIENT_FAILURES over
# any accounts, the client may not log in at all. Failures from elsewhere never lock an account
# for its owner. Every attempt is in the audit log, the client address as its target.
MAX_FAILURES = 5
MAX_CLIENT_FAILURES = 20
FAILURE_WINDOW_MINUTES = 15


def safe_next(target: str) -> str:
    """Only same-site paths: never an open redirect to another host."""
    if target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


def _login_page(request: Request, error: str = "", status_code: int = 200) -> HTMLResponse:
    ctx = context_of(request)
    cookie, token = ctx.sessions.login_token()
    response = page(
        request,
        "login.html",
        status_code=status_code,
        user=None,
        csrf=token,
        error=error,
        next=safe_next(request.query_params.get("next", "/")),
    )
    response.set_cookie(
        LOGIN_COOKIE,
        cookie,
        httponly=True,
        samesite="strict",
        secure=ctx.settings.secure_cookies,
        max_age=3600,
    )
    return response


@router.get("/login", name="login_form")
async def login_form(request: Request) -> HTMLResponse:
    return _login_page(request)


@router.post("/login", name="login")
async def login(request: Request) -> Response:
    ctx = context_of(request)
    form = await request.form()
    if not ctx.sessions.login_token_ok(request.cookies.get(LOGIN_COOKIE), form.get(CSRF_FIELD)):  # type: ignore[arg-type]
        return _login_page(request, "登录表单已过期，请重试。", status_code=403)
    username = form_text(form, "username")[:64]
    password = form.get("password")
    client = request.client.host if request.client else "-"
    window = FAILURE_WINDOW_MINUTES
    if (
        audit.recent_count(ctx.db, username, "login_failed", window, target=client) >= MAX_FAILURES
        or audit.recent_count(ctx.db, None, "login_failed", window, target=client)
        >= MAX_CLIENT_FAILURES
    ):
        audit.record(ctx.db, username or "-", "login_locked", client)
        return _login_page(request, "尝试次数过多，请 15 分钟后再试。", status_code=429)
    user = authenticate(ctx.db, username, password if isinstance(password, str) else "")
    if user is None:
        audit.record(ctx.db, username or "-", "login_failed", client)
        return _login_page(request, "用户名或密码错误。", status_code=401)
    cookie, _ = ctx.sessions.open(user.username)
    audit.record(ctx.db, user.username, "login")
    response = RedirectResponse(safe_next(form_text(form, "next") or "/"), status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        cookie,
        httponly=True,
        samesite="lax",
        secure=ctx.settings.secure_cookies,
        max_age=int(ctx.settings.session_lifetime.total_seconds()),
    )
    response.delete_cookie(LOGIN_COOKIE)
    return response


@router.post("/logout", name="logout")
async def logout(request: Request, user: AnyUser) -> Response:
    ctx = context_of(request)
    ctx.sessions.close(request.cookies.get(SESSION_COOKIE))
    audit.record(ctx.db, user.username, "logout")
    response = RedirectResponse(str(request.url_for("login_form")), status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response
