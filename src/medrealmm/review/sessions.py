"""Server-side login sessions with a per-session CSRF token.

The cookie carries a random token signed with the app secret; the table keeps only the token's
hash, so logging out (or expiry) ends a session even if its cookie was copied.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from itsdangerous import BadSignature, TimestampSigner

from medrealmm.store import stages

_SCHEMA = """
CREATE TABLE IF NOT EXISTS review_sessions (
    token_hash TEXT PRIMARY KEY,
    username TEXT NOT NULL,
    csrf TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
"""

SECRET_META_KEY = stages.REVIEW_SECRET_META


@dataclass(frozen=True)
class Session:
    username: str
    csrf: str


def ensure_schema(db: sqlite3.Connection) -> None:
    db.executescript(_SCHEMA)


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


class SessionStore:
    def __init__(self, db: sqlite3.Connection, secret: str, lifetime: timedelta) -> None:
        ensure_schema(db)
        self._db = db
        self._signer = TimestampSigner(secret, salt="medrealmm.review.session")
        self._login_signer = TimestampSigner(secret, salt="medrealmm.review.login")
        self.lifetime = lifetime

    def open(self, username: str) -> tuple[str, Session]:
        """A fresh session; returns the signed cookie value and the session."""
        token = secrets.token_urlsafe(32)
        session = Session(username, secrets.token_urlsafe(24))
        expires = (_now() + self.lifetime).isoformat()
        self._db.execute("DELETE FROM review_sessions WHERE expires_at < ?", (_now().isoformat(),))
        self._db.execute(
            "INSERT INTO review_sessions(token_hash, username, csrf, expires_at) VALUES (?,?,?,?)",
            (_hash(token), username, session.csrf, expires),
        )
        return self._signer.sign(token).decode("ascii"), session

    def lookup(self, cookie: str | None) -> Session | None:
        token = self._unsign(self._signer, cookie)
        if token is None:
            return None
        row = self._db.execute(
            "SELECT username, csrf, expires_at FROM review_sessions WHERE token_hash=?",
            (_hash(token),),
        ).fetchone()
        if row is None or row[2] < _now().isoformat():
            return None
        return Session(row[0], row[1])

    def close(self, cookie: str | None) -> None:
        token = self._unsign(self._signer, cookie)
        if token is not None:
            self._db.execute("DELETE FROM review_sessions WHERE token_hash=?", (_hash(token),))

    # -- CSRF for the login form, before any session exists ----------------------------
    def login_token(self) -> tuple[str, str]:
        """(cookie value, form value): the form must echo the token the cookie vouches for."""
        token = secrets.token_urlsafe(24)
        return self._login_signer.sign(token).decode("ascii"), token

    def login_token_ok(self, cookie: str | None, form_value: str | None) -> bool:
        token = self._unsign(self._login_signer, cookie, max_age=3600)
        return token is not None and form_value is not None and tokens_match(token, form_value)

    def _unsign(
        self, signer: TimestampSigner, cookie: str | None, max_age: int | None = None
    ) -> str | None:
        if not cookie:
            return None
        age = max_age if max_age is not None else int(self.lifetime.total_seconds())
        try:
            return signer.unsign(cookie, max_age=age).decode("ascii")
        except (BadSignature, UnicodeDecodeError):
            return None


def tokens_match(expected: str, given: str) -> bool:
    return hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8"))
