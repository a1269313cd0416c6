"""What every request handler needs: the store, its connection, sessions, templates, settings."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import Request
from fastapi.templating import Jinja2Templates

from medrealmm.review.sessions import SessionStore
from medrealmm.store import RunStore

if TYPE_CHECKING:
    from medrealmm.review.refining import RefineWorker


@dataclass(frozen=True)
class ReviewSettings:
    """``secret`` signs cookies (default: one generated once and kept in the store's meta);
    ``model``/``models_config``/``max_rounds`` drive the rubric Refiner the app runs;
    ``corpus_config`` is the corpus YAML whose review section (audit seed, fraction) Φ_rev uses."""

    secret: str | None = None
    session_lifetime: timedelta = timedelta(hours=8)
    secure_cookies: bool = False
    model: str = "offline"
    models_config: Path | None = None
    max_rounds: int = 3
    corpus_config: Path | None = None
    #: Host header values served (port ignored); anything else is a 400, so a DNS-rebinding
    #: page in a physician's browser cannot reach the app through its loopback port.
    allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")


@dataclass
class ReviewContext:
    store: RunStore
    sessions: SessionStore
    templates: Jinja2Templates
    settings: ReviewSettings
    refiner: RefineWorker | None  # None when medrealmm.rubric is not installed

    @property
    def db(self) -> sqlite3.Connection:
        return self.store.connection()


def context_of(request: Request) -> ReviewContext:
    return request.app.state.review
