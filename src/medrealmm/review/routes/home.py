"""The landing page: the task queues the user's roles give them, with what is left in each."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from starlette.routing import NoMatchFound

from medrealmm.mccp.validation import decisions as mccp_decisions
from medrealmm.mccp.validation import validation_sample
from medrealmm.review import panel
from medrealmm.review.accounts import Role, User
from medrealmm.review.context import ReviewContext, context_of
from medrealmm.review.deid_queue import queue_for
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


def _rubric_pending(ctx: ReviewContext, user: User) -> int:
    from medrealmm.rubric import pending_review

    return len(pending_review(ctx.store))


def _deid_pending(ctx: ReviewContext, user: User) -> int:
    return sum(row.decision is None for row in queue_for(ctx.store, user.username))


def _mccp_pending(ctx: ReviewContext, user: User) -> int:
    sample = validation_sample(ctx.store)
    mine = {d.instance_id for d in mccp_decisions(ctx.store) if d.reviewer == user.username}
    return sum(iid not in mine for iid in sample)


REVIEWERS = frozenset({Role.REVIEWER})
PHYSICIANS = frozenset({Role.PHYSICIAN})
ADMINS = frozenset({Role.ADMIN})

TASKS: list[Task] = [
    Task(
        "脱敏核查（隐私 / 临床可用性 / 抽检）",
        "deid_queue",
        frozenset({Role.REVIEWER}),
        _deid_pending,
    ),
    Task("MCCP 验证（接受 / 拒绝）", "mccp_queue", frozenset({Role.PHYSICIAN}), _mccp_pending),
    Task(
        "量表审阅（医生反馈 / 批准）", "rubric_queue", frozenset({Role.PHYSICIAN}), _rubric_pending
    ),
    Task("专家组评分（一致性研究）", "panel_queue", frozenset({Role.PHYSICIAN}), _panel_pending),
    Task("用户管理", "admin_users", frozenset({Role.ADMIN}), lambda ctx, user: 0),
    Task("审计日志", "admin_audit", frozenset({Role.ADMIN}), lambda ctx, user: 0),
]


@router.get("/", name="home")
async def home(request: Request, user: AnyUser) -> HTMLResponse:
    ctx = context_of(request)
    rows = []
    for task in TASKS:
        if not user.has_any(task.roles):
            continue
        try:
            url = request.url_for(task.route)
        except NoMatchFound:  # that screen's package is not installed in this build
            continue
        rows.append((task, url, task.pending(ctx, user)))
    return page(request, "home.html", tasks=rows)
