"""Per-route access checks: a logged-in user, one of the route's roles, and on writes a CSRF token.

Every route but the login form declares one of the annotations below; the access tests walk
every router and fail on a route without one, or with roles other than the expected ones.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from medrealmm.review.accounts import Role, User, get_user
from medrealmm.review.context import context_of
from medrealmm.review.sessions import tokens_match

SESSION_COOKIE = "medrealmm_session"
LOGIN_COOKIE = "medrealmm_login"
CSRF_FIELD = "csrf_token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
ANY_ROLE = frozenset(Role)


class NotLoggedIn(Exception):
    """Turned into a redirect to the login page (reads) or 401 (writes) by the app."""


def require(*roles: Role) -> Callable[[Request], Awaitable[User]]:
    """Dependency: the logged-in user holding any of ``roles`` (any role when none given)."""
    allowed = frozenset(roles) or ANY_ROLE

    async def dependency(request: Request) -> User:
        ctx = context_of(request)
        session = ctx.sessions.lookup(request.cookies.get(SESSION_COOKIE))
        user = get_user(ctx.db, session.username) if session else None
        if session is None or user is None:
            raise NotLoggedIn
        if not user.has_any(allowed):
            raise HTTPException(403, "您的角色无权使用此页面。")
        if request.method not in SAFE_METHODS:
            form = await request.form()
            token = form.get(CSRF_FIELD)
            if not isinstance(token, str) or not tokens_match(session.csrf, token):
                raise HTTPException(403, "表单校验失败（CSRF 令牌缺失或无效），请刷新页面后重试。")
        request.state.user = user
        request.state.csrf = session.csrf
        return user

    dependency.allowed_roles = allowed  # type: ignore[attr-defined]  # read by the route audit
    return dependency


# The user a route needs, as a parameter annotation: ``user: Physician``.
AnyUser = Annotated[User, Depends(require())]
Admin = Annotated[User, Depends(require(Role.ADMIN))]
Physician = Annotated[User, Depends(require(Role.PHYSICIAN))]
Reviewer = Annotated[User, Depends(require(Role.REVIEWER))]
CaseReader = Annotated[User, Depends(require(Role.PHYSICIAN, Role.REVIEWER))]

__all__ = [
    "CSRF_FIELD",
    "LOGIN_COOKIE",
    "SESSION_COOKIE",
    "Admin",
    "AnyUser",
    "CaseReader",
    "NotLoggedIn",
    "Physician",
    "Reviewer",
    "require",
]
