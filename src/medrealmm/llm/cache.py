"""SQLite response cache keyed by (backend name, messages, params, schema).

A rerun or a resumed run repeats no finished call: the key is a hash of everything that
determines the answer, and entries are committed as each call finishes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from medrealmm.llm.client import LLMClient
from medrealmm.llm.types import (
    ChatRequest,
    Completion,
    GenerationParams,
    ImagePart,
    Message,
    TextPart,
)

#: How ``json.dumps(..., ensure_ascii=False)`` writes a string (the C encoder it uses).
_string = json.encoder.encode_basestring


def _part_json(part: TextPart | ImagePart) -> str:
    # A text part's fields as ``model_dump(mode="json")`` gives them; an image by its digest.
    if isinstance(part, ImagePart):
        return f'{{"sha256":{_string(part.digest)},"type":"image"}}'
    return f'{{"text":{_string(part.text)},"type":{_string(part.type)}}}'


def _message_json(message: Message) -> str:
    content = ",".join([_part_json(part) for part in message.content])
    return f'{{"content":[{content}],"role":{_string(message.role)}}}'


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


#: Canonical JSON of the schemas seen, by id; each entry holds its schema so the id stays
#: its own. A structured task sends the same (cached) schema object on every call.
_SCHEMA_JSON: dict[int, tuple[object, str]] = {}

#: Canonical JSON of the decoding settings seen, by the ``repr`` of each value (0, 0.0 and
#: -0.0 are equal but differ in JSON, and in ``repr``); with an ``extra_body`` (values of any
#: type) they are dumped each time.
_PARAMS_JSON: dict[tuple[str, ...], str] = {}


def _schema_json(schema: dict[str, object] | None) -> str:
    found = _SCHEMA_JSON.get(id(schema))
    if found is None or found[0] is not schema:
        if len(_SCHEMA_JSON) > 256:
            _SCHEMA_JSON.clear()
        found = _SCHEMA_JSON[id(schema)] = (schema, _canonical(schema))
    return found[1]


def _params_json(params: GenerationParams) -> str:
    if params.extra_body:
        return _canonical(params.model_dump(mode="json"))
    values = tuple([repr(value) for value in vars(params).values()])
    found = _PARAMS_JSON.get(values)
    if found is None:
        if len(_PARAMS_JSON) > 256:
            _PARAMS_JSON.clear()
        found = _PARAMS_JSON[values] = _canonical(params.model_dump(mode="json"))
    return found


def cache_key(client_name: str, request: ChatRequest) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of {client, messages, params,
    schema}. It is written piece by piece, not dumped whole: the schema and the settings,
    the same on every call of a task, once, and each message straight from its parts. The
    bytes, and so the keys of existing stores, are those of the whole dump."""
    messages = ",".join([_message_json(m) for m in request.messages])
    blob = (
        f'{{"client":{_string(client_name)},"messages":[{messages}],'
        f'"params":{_params_json(request.params)},"schema":{_schema_json(request.json_schema)}}}'
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


#: Runs one write statement with its arguments.
Write = Callable[[str, Sequence[object]], object]


class LLMCache:
    def __init__(
        self,
        path: Path | str,
        *,
        connection: sqlite3.Connection | None = None,
        lock: AbstractContextManager[object] | None = None,
        write: Write | None = None,
    ) -> None:
        """A cache of its own in ``path``, or, given ``connection`` (and the ``lock`` that
        guards it), the cache of the run store that owns that connection: ``write`` is then
        the store's ``write_soon``, so an entry commits with the row of the unit that asked."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._owned = connection is None
        self._lock = lock or threading.Lock()
        if connection is None:
            connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
        self._db = connection
        self._write: Write = write or connection.execute
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS llm_cache ("
            " key TEXT PRIMARY KEY, task TEXT NOT NULL, client TEXT NOT NULL,"
            " completion TEXT NOT NULL, created_at TEXT DEFAULT CURRENT_TIMESTAMP)"
        )
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS llm_rejected ("
            " key TEXT NOT NULL, task TEXT NOT NULL, client TEXT NOT NULL, text TEXT NOT NULL,"
            " created_at TEXT DEFAULT CURRENT_TIMESTAMP)"
        )
        #: ``--debug-calls``: keep the raw text of replies that failed validation instead of
        #: dropping it. Off by default: it may hold patient text (the store stays local).
        self.keep_rejected = False
        #: (task, client, text) kept by this process, for the failure summary.
        self.rejected_now: list[tuple[str, str, str]] = []

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute(
                "SELECT completion FROM llm_cache WHERE key = ?", (key,)
            ).fetchone()
        return Completion.model_validate_json(row[0]) if row else None

    def put(self, key: str, task: str, client: str, completion: Completion) -> None:
        blob = completion.model_dump_json()
        with self._lock:
            self._write(
                "INSERT OR REPLACE INTO llm_cache(key, task, client, completion) VALUES (?,?,?,?)",
                (key, task, client, blob),
            )

    def delete(self, key: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM llm_cache WHERE key = ?", (key,))

    def reject(self, key: str) -> None:
        """Drop an answer that failed validation; with ``keep_rejected`` keep its raw text."""
        with self._lock:
            if self.keep_rejected:
                row = self._db.execute(
                    "SELECT task, client, completion FROM llm_cache WHERE key = ?", (key,)
                ).fetchone()
                if row is not None:
                    text = Completion.model_validate_json(row[2]).text
                    self._db.execute(
                        "INSERT INTO llm_rejected(key, task, client, text) VALUES (?,?,?,?)",
                        (key, row[0], row[1], text),
                    )
                    self.rejected_now.append((row[0], row[1], text))
            self._db.execute("DELETE FROM llm_cache WHERE key = ?", (key,))

    def rejected(self) -> list[tuple[str, str, str]]:
        """Every kept (task, client, raw text), oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT task, client, text FROM llm_rejected ORDER BY rowid"
            ).fetchall()
        return [(str(t), str(c), str(x)) for t, c, x in rows]

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0])

    def close(self) -> None:
        """Closes the connection it opened; a shared one is its store's to close."""
        if self._owned:
            with self._lock:
                self._db.close()


class CachedClient:
    """Wraps any client; answers from the cache when it can and counts what it did."""

    def __init__(self, inner: LLMClient, cache: LLMCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.is_baseline = inner.is_baseline
        self.vision = inner.vision
        self.reads_pixels = inner.reads_pixels
        self.hits = 0
        self.misses = 0

    def cache_identity(self, request: ChatRequest) -> str:
        return self.inner.cache_identity(request)

    def _key(self, request: ChatRequest) -> str:
        return cache_key(self.inner.cache_identity(request), request)

    async def complete(self, request: ChatRequest) -> Completion:
        key = self._key(request)
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            return hit.model_copy(update={"cached": True})
        completion = await self.inner.complete(request)
        self.misses += 1
        try:
            # Two loop turns before the reply is processed, so that a unit waiting for the
            # slot this call freed (``run_units``' ``ahead``) sends its request first. The
            # first turn queues this task behind the waiter it woke; but each reply of a burst
            # that arrived in one step wakes its waiter and queues itself the same way, so a
            # second turn is what puts every waiter's send ahead of every reply's processing
            # (``benchmarks/eval_throughput.py``'s harness rows show the rate; the order is
            # pinned in tests/foundation/test_store_runner.py).
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        finally:
            # Cached even when cancelled during those turns (no call repeated by a rerun),
            # and after them, so the entry commits with the unit's row (``RunStore.write_soon``).
            self.cache.put(key, request.task, self.inner.name, completion)
        return completion

    def forget(self, request: ChatRequest) -> None:
        """Drop a cached answer that turned out unusable, so a later run asks again."""
        self.cache.reject(self._key(request))
        self.inner.forget(request)

    async def aclose(self) -> None:
        """Closes the wrapped client; the cache belongs to the run store and stays open."""
        await self.inner.aclose()
