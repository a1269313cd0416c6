"""The run store: one SQLite file per run holding every stage's finished work.

Each unit of work (a consultation filtered, a criterion graded) is a row keyed by
(stage, key), committed the moment it finishes. A killed run restarts, asks which keys are
done, and does only the rest. The LLM cache lives in the same file, so even a unit that was
half done repeats none of its finished calls.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from medrealmm.llm.cache import LLMCache
from medrealmm.llm.types import Completion
from medrealmm.store.stages import built_key

M = TypeVar("M", bound=BaseModel)

STORE_FILENAME = "store.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    stage TEXT NOT NULL,
    key TEXT NOT NULL,
    status TEXT NOT NULL,
    payload TEXT,
    error TEXT,
    updated_at TEXT DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (stage, key)
);
CREATE TABLE IF NOT EXISTS usage (
    stage TEXT NOT NULL,
    model TEXT NOT NULL,
    calls INTEGER NOT NULL DEFAULT 0,
    cached_calls INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (stage, model)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

DONE = "done"
FAILED = "failed"


class RunStore:
    def __init__(self, path: Path | str) -> None:
        path = Path(path)
        if path.is_dir() or path.suffix == "":
            path = path / STORE_FILENAME
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self.cache = LLMCache(path)

    # -- generic records -------------------------------------------------------------
    def put(
        self,
        stage: str,
        key: str,
        payload: BaseModel | dict[str, Any] | None,
        *,
        status: str = DONE,
        error: str | None = None,
    ) -> None:
        if isinstance(payload, BaseModel):
            blob: str | None = payload.model_dump_json()
        elif payload is None:
            blob = None
        else:
            blob = json.dumps(payload, ensure_ascii=False, sort_keys=True)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO records(stage, key, status, payload, error, updated_at)"
                " VALUES (?,?,?,?,?,CURRENT_TIMESTAMP)",
                (stage, key, status, blob, error),
            )

    def put_many(self, stage: str, items: Iterable[tuple[str, BaseModel]]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                for key, payload in items:
                    self._db.execute(
                        "INSERT OR REPLACE INTO records(stage, key, status, payload)"
                        " VALUES (?,?,?,?)",
                        (stage, key, DONE, payload.model_dump_json()),
                    )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def replace(self, rows: Mapping[str, Iterable[tuple[str, BaseModel]]]) -> None:
        """Swap each named stage's rows for the given ones in one transaction, and mark them
        built: a reader (or a killed rebuild) sees all old rows or all new, never a mix."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for stage, items in rows.items():
                    self._db.execute("DELETE FROM records WHERE stage=?", (stage,))
                    self._db.executemany(
                        "INSERT INTO records(stage, key, status, payload) VALUES (?,?,?,?)",
                        ((stage, key, DONE, payload.model_dump_json()) for key, payload in items),
                    )
                    self._set_meta(built_key(stage), True)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def clear(self, stages: Iterable[str]) -> None:
        """Drop the rows and the built mark of ``stages`` in one transaction (a redo)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for stage in stages:
                    self._db.execute("DELETE FROM records WHERE stage=?", (stage,))
                    self._db.execute("DELETE FROM meta WHERE key=?", (built_key(stage),))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def mark_built(self, stage: str) -> None:
        self.set_meta(built_key(stage), True)

    def is_built(self, stage: str) -> bool:
        """Whether the stage that writes ``stage`` ran here (rows alone count, for stores
        filled before built marks existed)."""
        return bool(self.get_meta(built_key(stage))) or self.count(stage) > 0

    def get(self, stage: str, key: str, model: type[M]) -> M | None:
        with self._lock:
            row = self._db.execute(
                "SELECT payload FROM records WHERE stage=? AND key=? AND status=?",
                (stage, key, DONE),
            ).fetchone()
        return model.model_validate_json(row[0]) if row and row[0] is not None else None

    def get_raw(self, stage: str, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT payload FROM records WHERE stage=? AND key=?", (stage, key)
            ).fetchone()
        return json.loads(row[0]) if row and row[0] is not None else None

    def keys(self, stage: str, status: str | None = DONE) -> set[str]:
        query = "SELECT key FROM records WHERE stage=?"
        args: tuple[str, ...] = (stage,)
        if status is not None:
            query += " AND status=?"
            args = (stage, status)
        with self._lock:
            return {row[0] for row in self._db.execute(query, args)}

    def iter(self, stage: str, model: type[M]) -> Iterator[M]:
        """Finished records of a stage in key order (stable across runs)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT payload FROM records WHERE stage=? AND status=? ORDER BY key",
                (stage, DONE),
            ).fetchall()
        for (payload,) in rows:
            yield model.model_validate_json(payload)

    def items(self, stage: str, model: type[M]) -> Iterator[tuple[str, M]]:
        """Finished records with their keys, in key order, read in one query."""
        with self._lock:
            rows = self._db.execute(
                "SELECT key, payload FROM records WHERE stage=? AND status=? ORDER BY key",
                (stage, DONE),
            ).fetchall()
        for key, payload in rows:
            yield key, model.model_validate_json(payload)

    def failures(self, stage: str) -> dict[str, str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT key, error FROM records WHERE stage=? AND status=? ORDER BY key",
                (stage, FAILED),
            ).fetchall()
        return {key: error or "" for key, error in rows}

    def count(self, stage: str, status: str | None = DONE) -> int:
        return len(self.keys(stage, status))

    def stages(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute(
                "SELECT stage, COUNT(*) FROM records GROUP BY stage ORDER BY stage"
            ).fetchall()
        return {stage: n for stage, n in rows}

    def delete(self, stage: str, key: str | None = None) -> None:
        with self._lock:
            if key is None:
                self._db.execute("DELETE FROM records WHERE stage=?", (stage,))
            else:
                self._db.execute("DELETE FROM records WHERE stage=? AND key=?", (stage, key))

    # -- accounting ------------------------------------------------------------------
    def record_usage(self, stage: str, model: str, completion: Completion) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO usage(stage, model, calls, cached_calls, prompt_tokens,"
                " completion_tokens) VALUES (?,?,1,?,?,?)"
                " ON CONFLICT(stage, model) DO UPDATE SET calls=calls+1,"
                " cached_calls=cached_calls+excluded.cached_calls,"
                " prompt_tokens=prompt_tokens+excluded.prompt_tokens,"
                " completion_tokens=completion_tokens+excluded.completion_tokens",
                (
                    stage,
                    model,
                    int(completion.cached),
                    0 if completion.cached else completion.usage.prompt_tokens,
                    0 if completion.cached else completion.usage.completion_tokens,
                ),
            )

    def usage(self) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self._db.execute(
                "SELECT stage, model, calls, cached_calls, prompt_tokens, completion_tokens"
                " FROM usage ORDER BY stage, model"
            )
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    # -- metadata --------------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        with self._lock:
            self._set_meta(key, value)

    def _set_meta(self, key: str, value: Any) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
            (key, json.dumps(value, ensure_ascii=False, sort_keys=True)),
        )

    def get_meta(self, key: str, default: Any = None) -> Any:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def connection(self) -> sqlite3.Connection:
        """For modules that keep tables of their own in the same file (review, rubric)."""
        return self._db

    def close(self) -> None:
        self.cache.close()
        with self._lock:
            self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
