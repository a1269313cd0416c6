"""The landing page: the task queues the user's roles give them, with what is left in each."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from medrealmm.review import panel
from medrealmm.review.accounts import Role, User
from medrealmm.review.context import ReviewContext, context_of
from medrealmm.review.guards import AnyUser
from medrealmm.review.routes.common import page

router = APIRouter()


@dataclass(frozen=True)
class Task:
    title: str
    route: str
    roles: frozenset[Role]
    pending: Callable[[ReviewContext, User], int]


def _panel_pending(ctx: ReviewContext, user: User) -> int:
    return sum(not item.done for item in panel.queue(ctx.store, user.username))


TASKS: list[Task] = [
    Task("专家组评分（一致性研究）", "panel_queue", frozenset({Role.PHYSICIAN}), _panel_pending),
    Task("用户管理", "admin_users", frozenset({Role.ADMIN}), lambda ctx, user: 0),
    Task("审计日志", "admin_audit", frozenset({Role.ADMIN}), lambda ctx, user: 0),
]


@router.get("/", name="home")
async def home(request: Request, user: AnyUser) -> HTMLResponse:
    ctx = context_of(request)
    rows = [
        (task, request.url_for(task.route), task.pending(ctx, user))
        for task in TASKS
        if user.has_any(task.roles)
    ]
    return page(request, "home.html", tasks=rows)
