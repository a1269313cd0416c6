"""One router per screen group; ``ROUTERS`` is what the app mounts."""

from __future__ import annotations

from medrealmm.review.routes import admin, auth, cases, home, panel

ROUTERS = (auth.router, home.router, cases.router, panel.router, admin.router)
