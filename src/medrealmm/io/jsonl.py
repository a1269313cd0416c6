"""Streaming JSONL: one record a line, never the whole file in memory."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TypeVar

from pydantic import BaseModel, ValidationError

from medrealmm.io.errors import DataError

M = TypeVar("M", bound=BaseModel)


def iter_jsonl(path: Path | str, model: type[M]) -> Iterator[M]:
    """Yield validated records; blank lines are skipped, anything else malformed raises."""
    path = Path(path)
    with path.open("r", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(path, number, "<json>", f"not valid JSON: {exc.msg}") from None
            try:
                yield model.model_validate(raw)
            except ValidationError as exc:
                raise DataError.from_validation(path, number, exc) from None


def dump_line(record: BaseModel) -> str:
    return record.model_dump_json(exclude_none=False) + "\n"


@contextmanager
def atomic_writer(path: Path | str) -> Iterator[IO[str]]:
    """Write to a temp file beside ``path`` and rename, so a killed run never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
