"""The run store: one SQLite file per run holding every stage's finished work.

Each unit of work (a consultation filtered, a criterion graded) is a row keyed by
(stage, key), committed the moment it finishes. A killed run restarts, asks which keys are
done, and does only the rest. The LLM cache lives in the same file, so even a unit that was
half done repeats none of its finished calls.

The cache and the usage counters share the store's connection, and inside an event loop their
writes commit with the unit's row (``write_soon``): one commit per graded criterion, not
three, the largest part of the harness's CPU per call. None waits past the current loop step.

Every row write goes through one hook, ``_rows_changing``, first: the run's release and report
made from the stage written (``store.derived``) are removed, so neither outlives its rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import hashlib
import json
import logging
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import from_json

from medrealmm.io import diskfull
from medrealmm.llm.cache import LLMCache
from medrealmm.llm.types import Completion
from medrealmm.store import lock
from medrealmm.store import stages as stage_names
from medrealmm.store.derived import (
    DERIVED,
    REBUILD,
    STALE_FILE,
    CurrentCases,
    derived_for,
    kept_folders,
    refresh_stale,
    remove_derived,
)
from medrealmm.store.stages import built_key, image_root_key

log = logging.getLogger("medrealmm.store")

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

STORE_FILENAME = "store.sqlite"


def content_sha(payload: str) -> str:
    """What lineage compares: the hash of a row's stored JSON."""
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


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
    failed_calls INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    unknown_prompt_calls INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (stage, model)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS lineage (
    stage TEXT NOT NULL,
    key TEXT NOT NULL,
    source_stage TEXT NOT NULL,
    source_key TEXT NOT NULL,
    source_sha TEXT NOT NULL,
    PRIMARY KEY (stage, key, source_stage, source_key)
);
CREATE INDEX IF NOT EXISTS lineage_source ON lineage(source_stage, source_key);
"""

#: Usage columns added after the first release; ``_migrate`` adds them to older stores.
_USAGE_ADDED = frozenset({"failed_calls", "attempts", "unknown_prompt_calls"})
_USAGE_COLUMNS = (
    "stage, model, calls, cached_calls, prompt_tokens, completion_tokens, failed_calls, attempts"
    ", unknown_prompt_calls"
)

DONE = "done"
FAILED = "failed"


@functools.cache
def _usage_upsert(names: tuple[str, ...]) -> str:
    """The statement adding ``names`` to a usage row; a handful of shapes, each built once."""
    updates = ", ".join(f"{n}={n}+excluded.{n}" for n in names)
    return (
        f"INSERT INTO usage(stage, model, {', '.join(names)})"
        f" VALUES (?,?,{','.join('?' * len(names))})"
        f" ON CONFLICT(stage, model) DO UPDATE SET {updates}"
    )


#: The first bytes of every SQLite database file.
SQLITE_HEADER = b"SQLite format 3\x00"
STORE_SUFFIX = ".sqlite"


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` is an existing SQLite database (by its header, not its name)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def store_file(path: Path | str) -> Path:
    """The one rule from a run argument to its store file: a run is always a folder holding
    ``store.sqlite``; a path names the store file itself only when it ends in ``.sqlite`` or
    is an existing SQLite file. So a dotted folder name (``results-0.2``, ``qwen2.5-vl``) is a
    folder, never a database file whose parent would be taken for the run."""
    path = Path(path)
    if path.is_dir():
        return path / STORE_FILENAME
    if path.suffix == STORE_SUFFIX:
        return path
    if path.is_file():
        if is_sqlite_file(path):
            return path
        raise ValueError(
            f"{path} is a file, not a run folder or a run store ({STORE_FILENAME}); "
            "give the run's folder"
        )
    return path / STORE_FILENAME


def existing_store(path: Path | str) -> Path:
    """The store file of a run folder (or the file itself); a mistyped folder is an error."""
    store = store_file(path)
    if not store.is_file():
        raise FileNotFoundError(
            f"{store.parent} holds no run store ({STORE_FILENAME}); "
            "check the folder name, or run the earlier stages first"
        )
    return store


def _stamp(path: str) -> tuple[int, int] | None:
    """Which file is at ``path`` now (inode, modification time); None when there is none."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns)


def _missing_folder(folder: Path) -> Path | None:
    """The topmost folder of ``folder``'s path that does not exist yet (what a ``mkdir -p``
    of it creates), or None when it exists."""
    made = None
    while not folder.exists():
        made = folder
        if folder.parent == folder:
            break
        folder = folder.parent
    return made


class RunStore:
    def __init__(self, path: Path | str, *, writer: bool = False, create: bool = True) -> None:
        """Open (or create) a run's store. ``writer=True`` takes the single-writer lock: what
        runs stages does, so a second such process is refused with the holder named.
        ``create=False`` is for commands that continue a run: a mistyped folder is an error,
        not a new empty store."""
        path = existing_store(path) if not create else store_file(path)
        self._derived = {name: os.path.join(path.parent, name, f) for name, f in DERIVED.items()}
        #: what this open creates (the folder, the store file): a failed first command
        #: removes exactly these again (``close(failed=True)``), so a refusal leaves nothing
        self._made_folder = _missing_folder(path.parent)
        self._made_file = not path.exists()
        # a new store wrote none of the derived folders already beside it (``--out .`` next to
        # the release being evaluated): those, as they are now, are never its to remove
        self._foreign = {n: _stamp(p) for n, p in self._derived.items()} if self._made_file else {}
        self._cases_changed = False  # rows dropped or a case withdrawn: see ``_after_write``
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._writer_lock = lock.acquire(path) if writer else None
        self._lock = threading.RLock()
        self._held = False  # inside ``transaction``: nested writes leave the commit to it
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        diskfull.opened(path)  # a full disk's one-line error names this file
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._migrate()
        self._closed = False
        self._memo: dict[str, tuple[tuple[int, int], Any]] | None = None  # see ``sharing``
        self.cache = LLMCache(path, connection=self._db, lock=self._lock, write=self.write_soon)

    def _migrate(self) -> None:
        """Stores written before a column existed gain it (zeros), so old runs still open."""
        with self._lock:
            have = {row[1] for row in self._db.execute("PRAGMA table_info(usage)")}
            for column in _USAGE_ADDED - have:
                self._db.execute(
                    f"ALTER TABLE usage ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0"
                )

    # -- transactions ----------------------------------------------------------------
    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write's transaction. Writes left open by ``write_soon`` (the cache entry and
        usage of the call this row records) commit with it; a failed write undoes only its own
        statements, so theirs still commit."""
        with self._lock:
            if not self._db.in_transaction:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield
                    self._db.execute("COMMIT")
                except BaseException:
                    self._rollback()
                    raise
                return
            self._db.execute("SAVEPOINT write")
            try:
                yield
            except BaseException:
                # A full disk (SQLITE_FULL) may already have rolled the whole transaction back.
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK TO write")
                    self._db.execute("RELEASE write")
                raise
            self._db.execute("RELEASE write")
            if self._held:
                return  # inside ``transaction``: it commits
            try:
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Several reads and writes as one (a read-modify-write no other writer, thread or
        process, can come between); the writes inside nest in it and commit with it."""
        with self._lock:
            if self._held:
                yield
                return
            with self._transaction():
                self._held = True
                try:
                    yield
                finally:
                    self._held = False

    def _rollback(self) -> None:
        """Undo the open transaction, if SQLite has not already (it rolls back on a full
        disk): a second error here would hide the first."""
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def write_soon(self, sql: str, args: Sequence[object]) -> None:
        """Run one write whose commit may wait for the end of the current event-loop step: the
        next row written in the step (the unit's own) commits it, else a callback queued for
        the next step does, before the loop waits on the network again. A kill therefore
        loses no more than a write made now would; outside a loop it commits at once."""
        with self._lock:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is None:
                self._db.execute(sql, args)
                if self._db.in_transaction and not self._held:  # ``transaction`` commits it
                    self._db.execute("COMMIT")  # with what a loop in another thread left open
                return
            if not self._db.in_transaction:
                self._db.execute("BEGIN IMMEDIATE")
                loop.call_soon(self._commit_pending)
            self._db.execute(sql, args)

    def _commit_pending(self) -> None:
        """Commit what ``write_soon`` left open (nothing, when a row's write already did)."""
        with self._lock:
            if not self._closed and self._db.in_transaction:
                self._db.execute("COMMIT")

    # -- derived outputs ---------------------------------------------------------------
    def _rows_changing(self, stage: str) -> None:
        """Rows of ``stage`` are about to change: the run's folders made from them
        (``store.derived``) go first, so none outlives its rows. Every row write calls it;
        it costs a stat per derived folder while none is there. Says what went, never a row."""
        names = tuple(n for n in derived_for(stage) if self._derived_here(n))
        removed = remove_derived(self.path.parent, names) if names else []
        if removed:
            log.warning(
                "rows of stage %s changed: removed %s, made from the rows before; rebuild with %s",
                stage,
                " and ".join(str(self.path.parent / name) for name in removed),
                " and ".join(REBUILD[name] for name in removed),
            )

    def _derived_here(self, name: str) -> bool:
        """Whether the run's derived folder ``name`` is there and is this run's to remove. A
        store this command created wrote none before it was opened: a folder beside a new
        store (``--out .`` next to a release being evaluated) is someone else's input."""
        stamp = _stamp(self._derived[name])
        return stamp is not None and self._foreign.get(name) != stamp

    def current_cases(self) -> CurrentCases:
        """The releasable consultations and the instances the rows hold, less withdrawn cases."""
        withdrawn = self.keys(stage_names.RELEASE_WITHDRAWN)
        corpus = self.keys(stage_names.CORPUS_FINAL) | self.keys(stage_names.CORPUS_DEID)
        instances = (
            key
            for key, case in self.fields(stage_names.MCCP_INSTANCE, ("consultation_id",))
            if case not in withdrawn
        )
        return CurrentCases(frozenset(corpus - withdrawn), frozenset(instances))

    def _after_write(self) -> None:
        """After rows were dropped or a case withdrawn: every folder kept beside the run that
        holds a case the rows no longer hold is marked ``STALE``, and said (``store.derived``)."""
        if self._cases_changed:
            self._cases_changed = False
            self.refresh_kept()

    def refresh_kept(self) -> None:
        """Mark (or, once rewritten, unmark) the kept folders beside the run (``store.derived``):
        the row writes that drop cases call it, and so do the exports once they rewrote theirs."""
        folders = kept_folders(self.path.parent)
        if not folders:
            return
        for folder, gone in refresh_stale(folders, self.current_cases()):
            log.warning(
                "%s holds %d cases the run no longer holds (withdrawn or dropped), e.g. %s: "
                "marked stale (%s)",
                folder,
                len(gone),
                gone[0],
                folder / STALE_FILE,
            )

    # -- generic records -------------------------------------------------------------
    def put(
        self,
        stage: str,
        key: str,
        payload: BaseModel | dict[str, Any] | None,
        *,
        status: str = DONE,
        error: str | None = None,
        sources: Iterable[tuple[str, str]] = (),
    ) -> None:
        """Write one row. ``sources`` names the (stage, key) rows it was made from: their
        content hash is kept with it, so ``prune_stale`` can drop it once they change."""
        if isinstance(payload, BaseModel):
            blob: str | None = payload.model_dump_json()
        elif payload is None:
            blob = None
        else:
            blob = json.dumps(payload, ensure_ascii=False, sort_keys=True)
        self._rows_changing(stage)
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO records(stage, key, status, payload, error, updated_at)"
                " VALUES (?,?,?,?,?,CURRENT_TIMESTAMP)",
                (stage, key, status, blob, error),
            )
            self._link(stage, key, sources)
            self._drop_stale_children(stage, key)
        self._cases_changed |= stage == stage_names.RELEASE_WITHDRAWN
        self._after_write()

    def _link(self, stage: str, key: str, sources: Iterable[tuple[str, str]]) -> None:
        self._db.execute("DELETE FROM lineage WHERE stage=? AND key=?", (stage, key))
        for source_stage, source_key in sources:
            row = self._db.execute(
                "SELECT payload FROM records WHERE stage=? AND key=? AND status=?",
                (source_stage, source_key, DONE),
            ).fetchone()
            # A source with no finished row leaves an empty hash: stale at the next check.
            sha = content_sha(row[0]) if row and row[0] is not None else ""
            self._db.execute(
                "INSERT OR REPLACE INTO lineage VALUES (?,?,?,?,?)",
                (stage, key, source_stage, source_key, sha),
            )

    def _drop_stale_children(self, stage: str, key: str | None = None) -> None:
        """Rows made from ``stage`` (or its row ``key``) whose source changed or vanished go,
        with everything made from them: a changed consultation loses its masked copy,
        instance, rubric and scores in the transaction that changed it."""
        query = (
            "SELECT l.stage, l.key, l.source_sha, r.payload FROM lineage l LEFT JOIN records r"
            " ON r.stage = l.source_stage AND r.key = l.source_key AND r.status = ?"
            " WHERE l.source_stage = ?"
        )
        args: tuple[str, ...] = (DONE, stage)
        if key is not None:
            query += " AND l.source_key = ?"
            args = (DONE, stage, key)
        links = self._db.execute(query, args).fetchall()
        stale = {
            (child_stage, child_key)
            for child_stage, child_key, sha, payload in links
            if payload is None or content_sha(payload) != sha
        }
        if stale:
            self._drop_with_descendants(stale)

    def prune_stale(self, stage: str) -> list[tuple[str, str]]:
        """Drop the rows of ``stage`` whose source rows changed or vanished, and everything
        derived from those rows in any stage, in one transaction; returns what was dropped."""
        with self._transaction():
            links = self._db.execute(
                "SELECT l.key, l.source_sha, r.payload FROM lineage l LEFT JOIN records r"
                " ON r.stage = l.source_stage AND r.key = l.source_key AND r.status = ?"
                " WHERE l.stage = ?",
                (DONE, stage),
            ).fetchall()
            stale = {
                (stage, key)
                for key, sha, payload in links
                if payload is None or content_sha(payload) != sha
            }
            dropped = self._drop_with_descendants(stale)
        self._after_write()
        return dropped

    def _drop_with_descendants(self, rows: set[tuple[str, str]]) -> list[tuple[str, str]]:
        dropped: list[tuple[str, str]] = []
        todo = sorted(rows)
        seen = set(rows)
        while todo:
            stage, key = todo.pop()
            dropped.append((stage, key))
            self._db.execute("DELETE FROM records WHERE stage=? AND key=?", (stage, key))
            self._db.execute("DELETE FROM lineage WHERE stage=? AND key=?", (stage, key))
            children = self._db.execute(
                "SELECT stage, key FROM lineage WHERE source_stage=? AND source_key=?",
                (stage, key),
            ).fetchall()
            for child in children:
                if child not in seen:
                    seen.add(child)
                    todo.append(child)
        for stage in sorted({stage for stage, _ in dropped}):
            self._rows_changing(stage)  # before the caller's commit, as for a written row
        self._cases_changed |= bool(dropped)
        return sorted(dropped)

    def put_many(
        self,
        stage: str,
        items: Iterable[tuple[str, BaseModel]],
        sources: Mapping[str, Iterable[tuple[str, str]]] | None = None,
    ) -> None:
        """Write many finished rows in one transaction; ``sources`` as in ``put``, by key."""
        with self._transaction():
            # rows no other row was made from have no children to check, row by row
            parents = self._db.execute(
                "SELECT 1 FROM lineage WHERE source_stage=? LIMIT 1", (stage,)
            ).fetchone()
            for number, (key, payload) in enumerate(items):
                if not number:
                    self._rows_changing(stage)  # at the first row: an empty batch changes none
                self._db.execute(
                    "INSERT OR REPLACE INTO records(stage, key, status, payload) VALUES (?,?,?,?)",
                    (stage, key, DONE, payload.model_dump_json()),
                )
                if sources is not None:
                    self._link(stage, key, sources.get(key, ()))
                if parents:
                    self._drop_stale_children(stage, key)
                self._cases_changed |= stage == stage_names.RELEASE_WITHDRAWN
        self._after_write()

    def replace(self, rows: Mapping[str, Iterable[tuple[str, BaseModel]]]) -> None:
        """Swap each named stage's rows for the given ones in one transaction, and mark them
        built: a reader (or a killed rebuild) sees all old rows or all new, never a mix."""
        with self._transaction():
            for stage, items in rows.items():
                self._rows_changing(stage)
                self._db.execute("DELETE FROM records WHERE stage=?", (stage,))
                self._db.execute("DELETE FROM lineage WHERE stage=?", (stage,))
                self._db.executemany(
                    "INSERT INTO records(stage, key, status, payload) VALUES (?,?,?,?)",
                    ((stage, key, DONE, payload.model_dump_json()) for key, payload in items),
                )
                self._set_meta(built_key(stage), True)
                self._drop_stale_children(stage)
            self._cases_changed = True
        self._after_write()

    def clear(self, stages: Iterable[str]) -> None:
        """Drop the rows and the built mark of ``stages``, and every row made from them, in one
        transaction (a redo)."""
        with self._transaction():
            for stage in stages:
                self._rows_changing(stage)
                self._db.execute("DELETE FROM records WHERE stage=?", (stage,))
                self._db.execute("DELETE FROM lineage WHERE stage=?", (stage,))
                self._db.execute("DELETE FROM meta WHERE key=?", (built_key(stage),))
                self._drop_stale_children(stage)
            self._cases_changed = True
        self._after_write()

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

    def raw_rows(self, stage: str, prefix: str = "") -> dict[str, str]:
        """The rows of ``stage`` whose key starts with ``prefix`` and that hold a payload,
        finished or failed, as stored JSON by key: what ``get_raw`` reads one at a time."""
        with self._lock:
            rows = self._db.execute(
                "SELECT key, payload FROM records WHERE stage=? AND key >= ? AND key < ?"
                " AND payload IS NOT NULL",
                (stage, prefix, prefix + "\U0010ffff"),
            ).fetchall()
        return dict(rows)

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

    def fields(
        self,
        stage: str,
        names: Sequence[str],
        *,
        page: int = 5000,
        having: str | Sequence[str] | None = None,
    ) -> Iterator[tuple[Any, ...]]:
        """``(key, *values)`` of a stage's finished records in key order: each value is
        SQLite's ``json_extract`` of a top-level field (a bool as 0/1, an object as JSON
        text); a name ending in ``#`` gives the length of that field's list instead (None
        where absent), so a list is not returned as text to be parsed, and one ending in
        ``?`` whether the field holds a value (0 where null or absent), so a long text is
        not copied to learn that it is there. ``having``: only the rows whose field of that
        name (or of any of those names) is set (not absent, null or false), chosen in SQL,
        so the rest are never returned to Python (the few baseline or measured replies of a
        large run). For readers that need a few fields of many rows (the report): no model
        is built and the rows come ``page`` at a time, so memory does not grow with the
        stage."""
        columns = _columns(names)
        chosen = ""
        if having is not None:
            named = (having,) if isinstance(having, str) else tuple(having)
            _columns(named)  # checked as the names are: they go into the SQL text
            tests = " OR ".join(
                f"json_type(payload, '$.{name}') NOT IN ('null', 'false')" for name in named
            )
            chosen = f"AND ({tests}) "
        return self._paged(stage, columns, chosen, page)

    def field_values(
        self, stage: str, names: Sequence[str], *, page: int = 5000
    ) -> Iterator[tuple[str, list[Any]]]:
        """``(key, values)`` of a stage's finished records in key order, ``values`` the
        top-level fields ``names`` (two or more) as JSON has them: a bool as bool, a list
        or object as Python's, None where null or absent. SQLite parses each row once for
        all of them (``fields`` parses it once per field) into a short JSON array, which
        pydantic-core's parser reads: for many fields of many rows (the report's scores)."""
        if len(names) < 2 or not all(name.isidentifier() for name in names):
            raise ValueError(f"not two or more field names: {list(names)!r}")
        paths = ", ".join(f"'$.{name}'" for name in names)  # checked: they go into the SQL
        column = f", json_extract(payload, {paths})"  # with two paths or more: an array
        absent = [None] * len(names)  # a finished row without a payload
        for key, values in self._paged(stage, column, "", page):
            yield key, absent.copy() if values is None else from_json(values)

    def _paged(self, stage: str, columns: str, chosen: str, page: int) -> Iterator[Any]:
        """``SELECT key{columns}`` of the finished rows of ``stage`` (and ``chosen``, SQL that
        follows ``AND``) in key order, ``page`` rows a query, so memory does not grow."""
        query = (
            f"SELECT key{columns} FROM records WHERE stage=? AND status=? AND key>? {chosen}"
            "ORDER BY key LIMIT ?"
        )
        after = ""
        while True:
            with self._lock:
                rows = self._db.execute(query, (stage, DONE, after, page)).fetchall()
            yield from rows
            if len(rows) < page:
                return
            after = rows[-1][0]

    def fields_under(
        self, stage: str, prefixes: Iterable[str], names: Sequence[str], *, page: int = 5000
    ) -> Iterator[tuple[Any, ...]]:
        """``fields`` of the finished rows whose key starts with one of ``prefixes``, prefix
        by prefix (each a range of the key index, so rows outside them are never read), in
        key order within each, ``page`` rows at a time."""
        columns = _columns(names)
        query = (
            f"SELECT key{columns} FROM records WHERE stage=? AND status=? AND key{{}}? AND key<? "
            "ORDER BY key LIMIT ?"
        )
        first, later = query.format(">="), query.format(">")
        for prefix in prefixes:
            after, end, sql = prefix, prefix + "\U0010ffff", first
            while True:
                with self._lock:
                    rows = self._db.execute(sql, (stage, DONE, after, end, page)).fetchall()
                yield from rows
                if len(rows) < page:
                    break
                after, sql = rows[-1][0], later

    def key_heads(self, stage: str, sep: str = "|") -> list[str]:
        """The distinct first fields (up to ``sep``) of a stage's finished keys, found by
        skipping through the key index, one look-up per field, not one per row."""
        heads: list[str] = []
        after = ""
        query = "SELECT key FROM records WHERE stage=? AND status=? AND key>=? ORDER BY key LIMIT 1"
        while True:
            with self._lock:
                row = self._db.execute(query, (stage, DONE, after)).fetchone()
            if row is None:
                return heads
            head = row[0].partition(sep)[0]
            heads.append(head)
            after = head + sep + "\U0010ffff"

    def _state(self) -> tuple[int, int]:
        """Changes since open: this connection's writes and (``data_version``) others'."""
        with self._lock:
            (version,) = self._db.execute("PRAGMA data_version").fetchone()
            return (self._db.total_changes, version)

    @contextlib.contextmanager
    def sharing(self) -> Iterator[None]:
        """Inside, ``memo`` keeps what it computes (while the store is unchanged); on leaving
        all of it is let go, so a long job holds it only while its readers run."""
        outer = self._memo
        self._memo = {} if outer is None else outer
        try:
            yield
        finally:
            self._memo = outer

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """``compute()`` once while the store is unchanged inside ``sharing``: several readers
        of one report (rubrics, case scores) share one read of thousands of rows. Outside it,
        ``compute()`` each time; either way with collection paused (``gc_paused``). Callers
        must not modify what it returns."""
        if self._memo is None:
            with gc_paused():
                return compute()
        state = self._state()
        found = self._memo.get(name)
        if found is not None and found[0] == state:
            return found[1]  # type: ignore[no-any-return]
        with gc_paused():
            value = compute()
        self._memo[name] = (state, value)
        return value

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
        """Delete a row (or a whole stage) and every row made from it, in one transaction."""
        self._rows_changing(stage)
        with self._transaction():
            if key is None:
                self._db.execute("DELETE FROM records WHERE stage=?", (stage,))
                self._db.execute("DELETE FROM lineage WHERE stage=?", (stage,))
            else:
                self._db.execute("DELETE FROM records WHERE stage=? AND key=?", (stage, key))
                self._db.execute("DELETE FROM lineage WHERE stage=? AND key=?", (stage, key))
            self._drop_stale_children(stage, key)
            self._cases_changed = True
        self._after_write()

    # -- accounting ------------------------------------------------------------------
    def record_calls(
        self,
        stage: str,
        model: str,
        completions: Iterable[Completion] = (),
        failed_attempts: int = 0,
    ) -> None:
        """Usage of one unit of work: every completion it got, plus the call that failed for
        good after ``failed_attempts`` requests (0: none did). The one way stages record usage,
        so failed calls are counted in every stage (their tokens are unknown: servers bill few)."""
        for completion in completions:
            cached = completion.cached
            prompt = completion.usage.prompt_tokens
            self._add_usage(
                stage,
                model,
                calls=1,
                cached_calls=int(cached),
                # the server did not say: the call is counted apart, its tokens not as 0
                unknown_prompt_calls=int(not cached and prompt is None),
                prompt_tokens=0 if cached or prompt is None else prompt,
                completion_tokens=0 if cached else completion.usage.completion_tokens,
                attempts=0 if cached else completion.attempts,
            )
        if failed_attempts:
            self._add_usage(stage, model, calls=1, failed_calls=1, attempts=failed_attempts)

    def _add_usage(self, stage: str, model: str, **counts: int) -> None:
        self.write_soon(_usage_upsert(tuple(counts)), (stage, model, *counts.values()))

    def usage(self) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self._db.execute(f"SELECT {_USAGE_COLUMNS} FROM usage ORDER BY stage, model")
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

    # -- image folders -------------------------------------------------------------
    def set_image_root(self, stage: str, root: Path | str | None) -> None:
        """Record where ``stage``'s images live: relative to the run folder when inside it (the
        masked copies), so a copied or moved run reads its own images; an input's folder
        outside the run stays absolute."""
        if root is None:
            self.set_meta(image_root_key(stage), None)
            return
        path, run = Path(root).resolve(), self.path.parent.resolve()
        inside = path == run or run in path.parents
        self.set_meta(
            image_root_key(stage), path.relative_to(run).as_posix() if inside else str(path)
        )

    def image_root(self, stage: str) -> Path | None:
        """Where ``stage``'s images live (``set_image_root``). A run written before roots were
        kept relative recorded its own folders absolute: one that names a folder of another
        run (a copy's original) is this run's folder of that name, said once."""
        value = self.get_meta(image_root_key(stage))
        if not value:
            return None
        recorded, run = Path(value), self.path.parent
        if not recorded.is_absolute():
            return run / recorded
        own = run / recorded.name
        elsewhere = recorded.parent.resolve() != run.resolve()
        if elsewhere and (recorded.parent / STORE_FILENAME).is_file() and own.is_dir():
            log.warning(
                "%s records images of stage %s in another run's folder %s; reading this run's "
                "%s instead",
                self.path,
                stage,
                recorded,
                own,
            )
            return own
        return recorded

    def connection(self) -> sqlite3.Connection:
        """For modules that keep tables of their own in the same file (review, rubric)."""
        return self._db

    def _made_calls(self) -> bool:
        with self._lock:
            usage = self._db.execute("SELECT 1 FROM usage LIMIT 1").fetchone()
            cached = self._db.execute("SELECT 1 FROM llm_cache LIMIT 1").fetchone()
        return bool(usage or cached)

    def close(self, *, failed: bool = False) -> None:
        """Close; ``failed``: the command that opened it failed. A store this open created and
        that recorded no model call is then removed with the folder made for it, and the
        removal said: a refused command (a mistyped model, a bad option) creates nothing,
        while a run that made calls keeps them to resume."""
        discard = failed and self._made_file and not self._closed and not self._made_calls()
        self.cache.close()
        with self._lock:
            self._commit_pending()
            self._closed = True
            self._db.close()
        diskfull.closed(self.path)
        if self._writer_lock is not None:
            lock.release(self._writer_lock)
            self._writer_lock = None
        if discard:
            self._discard()

    def _discard(self) -> None:
        """Remove what this open created: the store's files, and the folder if it made it."""
        files = [self.path, lock.lock_path(self.path)]
        files += [self.path.with_name(self.path.name + end) for end in ("-wal", "-shm")]
        for file in files:
            with contextlib.suppress(FileNotFoundError):
                file.unlink()
        if self._made_folder is not None:
            shutil.rmtree(self._made_folder, ignore_errors=True)
            log.warning("removed %s, which this failed command had created", self._made_folder)
        else:
            log.warning("removed %s, which this failed command had created", self.path)

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        failed = kind is not None and issubclass(kind, Exception)
        # ``typer.Exit`` carries a finished command's own exit code, not a refusal
        if failed and hasattr(rest[0], "exit_code"):
            failed = False
        self.close(failed=failed)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Cyclic garbage collection held off while a reader builds many long-lived objects
    that form no cycles (records, digests, verdicts): each collection their allocations
    trigger would walk all of them again (a second of a 16,000-case report's CPU time)."""
    if not gc.isenabled():  # paused already (a reader inside another)
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _columns(names: Sequence[str]) -> str:
    """The SQL columns ``RunStore.fields`` selects after the key: ``json_extract`` of each
    top-level field, ``json_array_length`` for a name ending in ``#``, whether it holds a
    value for one ending in ``?``."""
    fields = [name.removesuffix("#").removesuffix("?") for name in names]
    if not all(name.isidentifier() for name in fields):  # they go into the SQL text
        raise ValueError(f"not field names: {list(names)!r}")
    return "".join(
        f", json_array_length(payload, '$.{field}')"
        if name.endswith("#")
        else f", coalesce(json_type(payload, '$.{field}'), 'null') != 'null'"
        if name.endswith("?")
        else f", json_extract(payload, '$.{field}')"
        for name, field in zip(names, fields, strict=True)
    )
