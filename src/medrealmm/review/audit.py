"""Append-only audit log of who decided what, when: ids and labels only, never patient text."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS review_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}'
);
"""


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: str
    actor: str
    action: str
    target: str
    detail: dict[str, Any]


def ensure_schema(db: sqlite3.Connection) -> None:
    db.executescript(_SCHEMA)


def record(
    db: sqlite3.Connection,
    actor: str,
    action: str,
    target: str = "",
    detail: dict[str, Any] | None = None,
) -> None:
    ensure_schema(db)
    db.execute(
        "INSERT INTO review_audit(actor, action, target, detail) VALUES (?,?,?,?)",
        (actor, action, target, json.dumps(detail or {}, ensure_ascii=False, sort_keys=True)),
    )


def entries(
    db: sqlite3.Connection, *, action: str | None = None, limit: int = 500
) -> list[AuditEntry]:
    """Newest first."""
    ensure_schema(db)
    query = "SELECT id, at, actor, action, target, detail FROM review_audit"
    args: tuple[Any, ...] = ()
    if action is not None:
        query += " WHERE action=?"
        args = (action,)
    query += " ORDER BY id DESC LIMIT ?"
    rows = db.execute(query, (*args, limit)).fetchall()
    return [AuditEntry(r[0], r[1], r[2], r[3], r[4], json.loads(r[5])) for r in rows]


def recent_count(
    db: sqlite3.Connection,
    actor: str | None,
    action: str,
    minutes: int,
    *,
    target: str | None = None,
) -> int:
    """How often ``action`` happened in the last ``minutes``, by ``actor`` (None: anyone) and
    on ``target`` when given (e.g. failed logins from one client address)."""
    ensure_schema(db)
    query = (
        "SELECT COUNT(*) FROM review_audit WHERE action=?"
        " AND at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?)"
    )
    args: list[Any] = [action, f"-{minutes} minutes"]
    if actor is not None:
        query += " AND actor=?"
        args.append(actor)
    if target is not None:
        query += " AND target=?"
        args.append(target)
    row = db.execute(query, args).fetchone()
    return int(row[0])
