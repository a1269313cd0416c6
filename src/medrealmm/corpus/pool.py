"""The corpus between stages, on disk: a scratch SQLite file beside the run, not in memory.

Screening streams its rows here in line order; balancing reads each department's ids back in
id order, and every later stage streams what it needs, so a build's memory stays flat
whatever the input's size (``benchmarks/corpus_engines.py`` prints the peak). Ids are
compared as SQLite's BINARY collation does, byte by byte in UTF-8, which is code-point order:
Python's ``sorted`` order.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from medrealmm.corpus.balance import Pick
from medrealmm.corpus.reasons import Drop, Operator
from medrealmm.corpus.screen import ScreenRow, row_error
from medrealmm.io.errors import duplicate_id

_SCHEMA = """
CREATE TABLE lines (id TEXT PRIMARY KEY, line INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE kept (id TEXT PRIMARY KEY, department TEXT NOT NULL, record TEXT NOT NULL);
CREATE INDEX kept_department ON kept(department, id);
CREATE TABLE picks (id TEXT PRIMARY KEY, source_id TEXT NOT NULL, department TEXT NOT NULL);
CREATE TABLE drops (
    id TEXT PRIMARY KEY, operator TEXT NOT NULL, reason TEXT NOT NULL, drop_json TEXT NOT NULL
);
CREATE TABLE rule_kept (id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE agent_todo (id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE survivors (id TEXT PRIMARY KEY) WITHOUT ROWID;
"""
_BATCH = 2000
_PREFIX = ".corpus-pool-"
_ID_TABLES = ("rule_kept", "agent_todo", "survivors")


class CorpusPool:
    """Screened rows, picks, drops and survivors of one build; ``open_pool`` makes one."""

    def __init__(self, db: sqlite3.Connection, path: str) -> None:
        self._db = db
        self._path = path
        self.snapshots: dict[str, Counter[str]] = {
            "C0": Counter(),
            "C1": Counter(),
            "C2": Counter(),
        }

    def add_screened(self, rows: Iterable[ScreenRow]) -> None:
        """Take the screening's rows in line order: the first bad line or repeated id raises,
        as it would over the whole list; tally what reached C0, C1, C2."""
        lines: list[tuple[str, int]] = []
        kept: list[tuple[str, str, str]] = []
        drops: list[Drop] = []
        for row in rows:
            if row["error"]:
                self._flush(lines, kept, drops)
                raise row_error(self._path, row)
            lines.append((row["id"], row["line"]))
            department = row["department"]
            self.snapshots["C0"][department] += 1
            if row["drop"]:
                drop = Drop.model_validate_json(row["drop"])
                drops.append(drop)
                if drop.operator is Operator.IMAGE:
                    continue
            else:
                kept.append((row["id"], department, row["record"]))
                self.snapshots["C2"][department] += 1
            self.snapshots["C1"][department] += 1
            if len(lines) >= _BATCH:
                self._flush(lines, kept, drops)
        self._flush(lines, kept, drops)

    def _flush(
        self, lines: list[tuple[str, int]], kept: list[tuple[str, str, str]], drops: list[Drop]
    ) -> None:
        try:
            self._db.executemany("INSERT INTO lines VALUES (?, ?)", lines)
        except sqlite3.IntegrityError:
            self._raise_duplicate(lines)
        self._db.executemany("INSERT INTO kept VALUES (?, ?, ?)", kept)
        self.add_drops(drops)
        lines.clear()
        kept.clear()
        drops.clear()

    def _raise_duplicate(self, lines: list[tuple[str, int]]) -> None:
        """The batch had a repeat: name the first line (in line order) that repeats an id."""
        seen: dict[str, int] = {}
        for consultation_id, line in lines:
            first = seen.get(consultation_id)
            if first is None:
                found = self._db.execute(
                    "SELECT line FROM lines WHERE id=?", (consultation_id,)
                ).fetchone()
                first = found[0] if found else None
            if first is not None and first != line:  # not the row itself, kept by executemany
                raise duplicate_id(Path(self._path), line, consultation_id, first)
            seen[consultation_id] = line
        raise AssertionError("a batch refused by its key holds no repeated id")  # pragma: no cover

    def add_drops(self, drops: Iterable[Drop]) -> None:
        self._db.executemany(
            "INSERT INTO drops VALUES (?, ?, ?, ?)",
            (
                (d.consultation_id, d.operator.value, d.reason.value, d.model_dump_json())
                for d in drops
            ),
        )

    def department_sizes(self) -> dict[str, int]:
        """Screened cases kept (C2) by department."""
        rows = self._db.execute("SELECT department, COUNT(*) FROM kept GROUP BY department")
        return dict(rows.fetchall())

    def department_ids(self, department: str) -> Iterator[str]:
        """A department's kept ids in id order."""
        rows = self._db.execute("SELECT id FROM kept WHERE department=? ORDER BY id", (department,))
        for (consultation_id,) in rows:
            yield consultation_id

    def add_picks(self, picks: Iterable[Pick]) -> None:
        self._db.executemany(
            "INSERT INTO picks VALUES (?, ?, ?)", ((p.id, p.source_id, p.department) for p in picks)
        )

    def picks(self) -> Iterator[tuple[Pick, str]]:
        """Every pick of C3 in id order, with its source case's JSON."""
        yield from self._joined("SELECT p.source_id, p.id, p.department, k.record FROM picks p")

    def add_ids(self, table: str, ids: Iterable[str]) -> None:
        """Add to ``rule_kept`` (C3 after the 4a rule), ``agent_todo`` (sources the 4a agent
        has yet to screen) or ``survivors`` (C3')."""
        _known(table)
        self._db.executemany(f"INSERT INTO {table} VALUES (?)", ((i,) for i in ids))

    def keep_rule_kept(self) -> None:
        """C3' is C3 after the rule: no agent ran."""
        self._db.execute("INSERT INTO survivors SELECT id FROM rule_kept")

    def rule_kept(self) -> Iterator[Pick]:
        """The picks the 4a rule kept, in id order."""
        rows = self._db.execute(
            "SELECT p.source_id, p.id, p.department FROM rule_kept r JOIN picks p ON p.id = r.id "
            "ORDER BY p.id"
        )
        for source_id, pick_id, department in rows:
            yield Pick(source_id, pick_id, department)

    def rule_kept_sources(self) -> Iterator[str]:
        """The distinct source ids of the picks the 4a rule kept, in id order."""
        rows = self._db.execute(
            "SELECT DISTINCT p.source_id FROM rule_kept r JOIN picks p ON p.id = r.id "
            "ORDER BY p.source_id"
        )
        for (source_id,) in rows:
            yield source_id

    def agent_todo(self) -> Iterator[tuple[str, str]]:
        """(source id, JSON) of each source the agent has yet to screen, in id order."""
        yield from self._db.execute(
            "SELECT k.id, k.record FROM agent_todo t JOIN kept k ON k.id = t.id ORDER BY k.id"
        )

    def count(self, table: str) -> int:
        _known(table)
        return int(self._db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    def copies(self) -> int:
        return int(
            self._db.execute("SELECT COUNT(*) FROM picks WHERE id != source_id").fetchone()[0]
        )

    def survivors(self) -> Iterator[tuple[Pick, str]]:
        """C3' in id order, each with its source case's JSON."""
        yield from self._joined(
            "SELECT p.source_id, p.id, p.department, k.record FROM survivors s "
            "JOIN picks p ON p.id = s.id"
        )

    def _joined(self, select: str) -> Iterator[tuple[Pick, str]]:
        rows = self._db.execute(f"{select} JOIN kept k ON k.id = p.source_id ORDER BY p.id")
        for source_id, pick_id, department, record in rows:
            yield Pick(source_id, pick_id, department), record

    def pick_departments(self) -> Counter[str]:
        """C3 by department."""
        rows = self._db.execute("SELECT department, COUNT(*) FROM picks GROUP BY department")
        return Counter(dict(rows.fetchall()))

    def survivor_departments(self) -> Counter[str]:
        """C3' by department."""
        rows = self._db.execute(
            "SELECT p.department, COUNT(*) FROM survivors s JOIN picks p ON p.id = s.id "
            "GROUP BY p.department"
        )
        return Counter(dict(rows.fetchall()))

    def drops(self) -> Iterator[Drop]:
        """Every drop of the build in id order."""
        for (text,) in self._db.execute("SELECT drop_json FROM drops ORDER BY id"):
            yield Drop.model_validate_json(text)


def _known(table: str) -> None:
    if table not in _ID_TABLES:  # names go into SQL text: only the pool's own
        raise ValueError(f"no id table {table!r} in the corpus pool")


@contextmanager
def open_pool(out: Path, input_path: Path) -> Iterator[CorpusPool]:
    """A pool in a scratch folder inside ``out`` (room like the run's own), removed after; one
    a killed build left there goes first (the caller holds the run's writer lock)."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob(f"{_PREFIX}*"):
        shutil.rmtree(stale, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix=_PREFIX, dir=out) as folder:
        db = sqlite3.connect(Path(folder) / "pool.sqlite")
        try:
            # Nothing here outlives the build: no journal, no syncs, one transaction never
            # committed (pages past the 16 MB cache spill to the file, not to memory).
            db.executescript(
                "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=FILE;"
                "PRAGMA cache_size=-16000;" + _SCHEMA
            )
            yield CorpusPool(db, str(input_path))
        finally:
            db.close()
