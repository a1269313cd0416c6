"""The FastAPI app factory: server-rendered pages over one run store."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from urllib.parse import quote

import jinja2
from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from medrealmm.review import accounts, audit, sessions, webfont
from medrealmm.review.context import ReviewContext, ReviewSettings
from medrealmm.review.guards import CSRF_FIELD, SAFE_METHODS, NotLoggedIn
from medrealmm.review.highlight import highlight_html, highlight_with_suspects
from medrealmm.review.refining import RefineWorker
from medrealmm.review.routes import ROUTERS
from medrealmm.review.routes.common import page
from medrealmm.store import RunStore


def host_name(header: str) -> str:
    """The host of a Host header without its port; an IPv6 literal keeps its brackets."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[: header.find("]") + 1] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


# PHI pages: never cached, never framed, no third-party anything.
SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
}


#: The font is the same for everyone and changes only with the install: browsers keep it a day.
FONT_CACHING = "public, max-age=86400"


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("medrealmm.review", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["masked"] = highlight_html
    env.globals["with_suspects"] = highlight_with_suspects
    env.filters["q"] = lambda value: quote(str(value), safe="/")
    env.globals["csrf_field"] = CSRF_FIELD
    return Jinja2Templates(env=env)


def _secret(store: RunStore, settings: ReviewSettings) -> str:
    if settings.secret:
        return settings.secret
    secret = store.get_meta(sessions.SECRET_META_KEY)
    if secret is None:
        secret = sessions.new_secret()
        store.set_meta(sessions.SECRET_META_KEY, secret)
    return str(secret)


def create_app(store: RunStore, settings: ReviewSettings | None = None) -> FastAPI:
    settings = settings or ReviewSettings()
    db = store.connection()
    for ensure in (accounts.ensure_schema, audit.ensure_schema, sessions.ensure_schema):
        ensure(db)
    app = FastAPI(
        title="medrealmm review",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,  # no machine-readable map of PHI routes
    )
    app.state.review = ReviewContext(
        store=store,
        sessions=sessions.SessionStore(db, _secret(store, settings), settings.session_lifetime),
        templates=_templates(),
        settings=settings,
        refiner=RefineWorker(store, settings),
    )
    static = Path(str(resources.files("medrealmm.review") / "static"))
    app.mount("/static", StaticFiles(directory=static), name="static")
    for router in ROUTERS:
        app.include_router(router)

    @app.get("/font/cjk.woff", name="cjk_font", include_in_schema=False)
    def cjk_font() -> Response:
        """Not patient data: the same fixed subset for everyone, the login page included.
        A plain ``def``: the first cut takes seconds, off the event loop."""
        data = webfont.font_bytes()
        if data is None:
            return PlainTextResponse("no CJK font is installed", status_code=404)
        return Response(data, media_type="font/woff", headers={"Cache-Control": FONT_CACHING})

    allowed_hosts = {host.lower() for host in settings.allowed_hosts}

    @app.middleware("http")
    async def trusted_host(request: Request, call_next):  # type: ignore[no-untyped-def]
        # A DNS-rebinding page reaches this server under its own name: refuse unknown names.
        if host_name(request.headers.get("host", "")) not in allowed_hosts:
            return PlainTextResponse("Invalid host header", status_code=400)
        return await call_next(request)

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response: Response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @app.exception_handler(NotLoggedIn)
    async def not_logged_in(request: Request, exc: NotLoggedIn) -> Response:
        if request.method in SAFE_METHODS:
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            login = request.url_for("login_form").include_query_params(next=target)
            return RedirectResponse(str(login), status_code=303)
        return PlainTextResponse("log in first", status_code=401)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        response = page(
            request, "error.html", exc.status_code, status=exc.status_code, message=exc.detail
        )
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response

    return app
