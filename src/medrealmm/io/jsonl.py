"""Streaming JSONL: one record a line, never the whole file in memory."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar, cast

from pydantic import BaseModel, ValidationError

from medrealmm.io.errors import DataError

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


BOM = b"\xef\xbb\xbf"


def parse_json_line(path: Path | str, number: int, raw: bytes) -> object:
    """One JSONL line's bytes -> JSON value, or a DataError naming file and line.

    The one parser every reader uses, so a BOM, a CR or a bad byte reads the same in every
    command: a leading UTF-8 BOM on line 1 is dropped, lines end at LF only (a CRLF's CR is
    whitespace), the text must be UTF-8, and nesting too deep for Python is an error.
    """
    if number == 1 and raw.startswith(BOM):
        raw = raw[len(BOM) :]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 1].hex()
        message = f"not UTF-8: byte 0x{bad} at byte {exc.start + 1} of the line"
        raise DataError(path, number, "<encoding>", message) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        message = f"not valid JSON: {exc.msg} (column {exc.colno})"
        raise DataError(path, number, "<json>", message) from None
    except RecursionError:
        raise DataError(path, number, "<json>", "nested too deeply to read") from None


def iter_jsonl(path: Path | str, model: type[M]) -> Iterator[M]:
    """Yield validated records; blank lines are skipped, anything else malformed raises."""
    for _, record in iter_jsonl_lines(path, model):
        yield record


def iter_jsonl_lines(path: Path | str, model: type[M]) -> Iterator[tuple[int, M]]:
    """``iter_jsonl`` with each record's 1-based line number, for errors found later."""
    path = Path(path)
    if path.is_dir():
        raise DataError(path, 0, "<file>", "is a folder, not a JSONL file")
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip() or line.strip() == BOM:
                continue
            raw = parse_json_line(path, number, line)
            try:
                yield number, model.model_validate(raw)
            except ValidationError as exc:
                raise DataError.from_validation(path, number, exc) from None
            except RecursionError:
                raise DataError(path, number, "<record>", "nested too deeply to read") from None


def dump_line(record: BaseModel) -> str:
    return record.model_dump_json(exclude_none=False) + "\n"


@contextmanager
def atomic_writer(path: Path | str) -> Iterator[IO[str]]:
    """Write to a temp file beside ``path`` and rename, so a killed run never leaves half a file.

    A write's ``OSError`` (a full disk) names ``path``: the OS names no file for a write."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield cast(IO[str], _NamedWrites(handle, path))
            _named(handle.flush, path)  # what close would flush: its error names the file too
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class _NamedWrites:
    """A text handle whose write errors name the file being written."""

    def __init__(self, handle: IO[str], path: Path) -> None:
        self._handle = handle
        self._path = path

    def write(self, text: str) -> int:
        return _named(lambda: self._handle.write(text), self._path)

    def writelines(self, lines: Iterable[str]) -> None:
        _named(lambda: self._handle.writelines(lines), self._path)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


def _named(call: Callable[[], T], path: Path) -> T:
    try:
        return call()
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


def write_jsonl(path: Path | str, records: Iterable[BaseModel]) -> int:
    count = 0
    with atomic_writer(path) as handle:
        for record in records:
            handle.write(dump_line(record))
            count += 1
    return count


def append_jsonl(path: Path | str, record: BaseModel) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(dump_line(record))
