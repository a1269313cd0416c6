"""One router per screen group; ``ROUTERS`` is what the app mounts."""

from __future__ import annotations

from medrealmm.review.routes import admin, auth, cases, deid, home, mccp, panel, rubric

ROUTERS = (
    auth.router,
    home.router,
    cases.router,
    deid.router,
    mccp.router,
    rubric.router,
    panel.router,
    admin.router,
)
