"""One router per screen group; ``ROUTERS`` is what the app mounts.

The rubric screens drive ``medrealmm.rubric``; they are mounted when that package is present
(it lands separately), so the rest of the app works without it.
"""

from __future__ import annotations

from importlib.util import find_spec

from fastapi import APIRouter

from medrealmm.review.routes import admin, auth, cases, deid, home, mccp, panel

RUBRIC_API = find_spec("medrealmm.rubric") is not None


def _routers() -> tuple[APIRouter, ...]:
    screens = [auth.router, home.router, cases.router, deid.router, mccp.router]
    if RUBRIC_API:
        from medrealmm.review.routes import rubric

        screens.append(rubric.router)
    return (*screens, panel.router, admin.router)


ROUTERS = _routers()
