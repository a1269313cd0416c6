"""What every request handler needs: the store, its connection, sessions, templates, settings."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from fastapi import Request
from fastapi.templating import Jinja2Templates

from medrealmm.review.sessions import SessionStore
from medrealmm.store import RunStore


@dataclass(frozen=True)
class ReviewSettings:
    """``secret`` signs cookies (default: one generated once and kept in the store's meta)."""

    secret: str | None = None
    session_lifetime: timedelta = timedelta(hours=8)
    secure_cookies: bool = False
    model: str = "offline"
    models_config: Path | None = None


@dataclass
class ReviewContext:
    store: RunStore
    sessions: SessionStore
    templates: Jinja2Templates
    settings: ReviewSettings

    @property
    def db(self) -> sqlite3.Connection:
        return self.store.connection()


def context_of(request: Request) -> ReviewContext:
    return request.app.state.review
