"""Review-app accounts: users with roles, argon2-hashed passwords, in the run store's SQLite."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS review_users (
    username TEXT PRIMARY KEY,
    password_hash TEXT NOT NULL,
    roles TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
"""

USERNAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{2,64}$")
MIN_PASSWORD_CHARS = 8

# argon2id with the library's recommended parameters; tests swap in cheaper ones.
PASSWORD_HASHER = PasswordHasher()


class Role(StrEnum):
    """admin manages accounts and reads the audit log; the others do the paper's human steps."""

    ADMIN = "admin"
    PHYSICIAN = "physician"
    REVIEWER = "reviewer"


@dataclass(frozen=True)
class User:
    username: str
    roles: frozenset[Role]

    def has_any(self, roles: frozenset[Role]) -> bool:
        return bool(self.roles & roles)


class AccountError(ValueError):
    pass


def ensure_schema(db: sqlite3.Connection) -> None:
    db.executescript(_SCHEMA)


def parse_roles(names: list[str] | tuple[str, ...]) -> frozenset[Role]:
    try:
        roles = frozenset(Role(name.strip().lower()) for name in names if name.strip())
    except ValueError:
        allowed = ", ".join(r.value for r in Role)
        raise AccountError(f"unknown role in {list(names)}; choose from {allowed}") from None
    if not roles:
        raise AccountError("a user needs at least one role")
    return roles


def create_user(
    db: sqlite3.Connection,
    username: str,
    password: str,
    roles: frozenset[Role],
    *,
    replace: bool = False,
) -> User:
    """Add (or with ``replace``, reset) an account; only the argon2 hash is stored."""
    if not USERNAME_PATTERN.fullmatch(username):
        raise AccountError("username must be 2-64 characters of letters, digits, '_', '.', '-'")
    if len(password) < MIN_PASSWORD_CHARS:
        raise AccountError(f"password must have at least {MIN_PASSWORD_CHARS} characters")
    if not roles:
        raise AccountError("a user needs at least one role")
    ensure_schema(db)
    if not replace and get_user(db, username) is not None:
        raise AccountError(f"user {username!r} already exists")
    db.execute(
        "INSERT OR REPLACE INTO review_users(username, password_hash, roles, active)"
        " VALUES (?,?,?,1)",
        (username, PASSWORD_HASHER.hash(password), _join(roles)),
    )
    return User(username, roles)


def get_user(db: sqlite3.Connection, username: str) -> User | None:
    ensure_schema(db)
    row = db.execute(
        "SELECT username, roles FROM review_users WHERE username=? AND active=1", (username,)
    ).fetchone()
    return User(row[0], _split(row[1])) if row else None


def list_users(db: sqlite3.Connection) -> list[User]:
    ensure_schema(db)
    rows = db.execute(
        "SELECT username, roles FROM review_users WHERE active=1 ORDER BY username"
    ).fetchall()
    return [User(name, _split(roles)) for name, roles in rows]


def authenticate(db: sqlite3.Connection, username: str, password: str) -> User | None:
    """The user when the password matches; None otherwise, in about the same time either way."""
    ensure_schema(db)
    row = db.execute(
        "SELECT password_hash, roles FROM review_users WHERE username=? AND active=1",
        (username,),
    ).fetchone()
    # An unknown user still costs one hash, so timing does not reveal which names exist.
    try:
        PASSWORD_HASHER.verify(row[0] if row else _dummy_hash(), password)
    except (VerificationError, InvalidHashError):
        return None
    if row is None:
        return None
    if PASSWORD_HASHER.check_needs_rehash(row[0]):
        db.execute(
            "UPDATE review_users SET password_hash=? WHERE username=?",
            (PASSWORD_HASHER.hash(password), username),
        )
    return User(username, _split(row[1]))


@lru_cache(maxsize=4)
def _dummy_hash_for(hasher_id: int) -> str:
    return PASSWORD_HASHER.hash("not-a-real-password")


def _dummy_hash() -> str:
    return _dummy_hash_for(id(PASSWORD_HASHER))


def _join(roles: frozenset[Role]) -> str:
    return ",".join(sorted(r.value for r in roles))


def _split(text: str) -> frozenset[Role]:
    return frozenset(Role(part) for part in text.split(",") if part)
