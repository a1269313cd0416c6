"""The per-consultation part of the chain (parse, Φ_img, Φ_cmpl) over one shard of a JSONL file.

A shard is a byte range of the input plus the line number it starts on, so any worker that
can read the file (a local process or a Ray task) screens it without the driver shipping
text, and every error still names its file and line. Rows are plain dicts of strings and
ints: they cross process and Arrow boundaries unchanged, which keeps engines byte-identical.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from pydantic import ValidationError

from medrealmm.corpus.config import CompletenessConfig
from medrealmm.corpus.filters import completeness_filter, image_filter
from medrealmm.io.errors import DataError
from medrealmm.io.jsonl import parse_json_line
from medrealmm.schema import Consultation

DEFAULT_SHARD_LINES = 2000


@dataclass(frozen=True)
class Shard:
    path: str
    start: int
    end: int
    first_line: int
    lines: int

    def as_row(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start": self.start,
            "end": self.end,
            "first_line": self.first_line,
            "lines": self.lines,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Shard:
        return cls(
            str(row["path"]),
            int(row["start"]),
            int(row["end"]),
            int(row["first_line"]),
            int(row["lines"]),
        )


class ScreenRow(TypedDict):
    """``drop`` is a Drop as JSON or ""; ``record`` the canonical case JSON when kept."""

    line: int
    id: str
    department: str
    drop: str
    record: str
    error: str


def plan_shards(
    path: Path | str, lines_per_shard: int = DEFAULT_SHARD_LINES, limit: int | None = None
) -> list[Shard]:
    """Cut the file at line boundaries every ``lines_per_shard`` lines (one cheap byte scan);
    ``limit`` stops after that many lines (a trial run on the head of the file)."""
    path = Path(path)
    shards: list[Shard] = []
    start = offset = count = 0
    first_line = next_line = 1
    with path.open("rb") as handle:
        for raw in handle:
            if limit is not None and next_line > limit:
                break
            offset += len(raw)
            count += 1
            next_line += 1
            if count == lines_per_shard:
                shards.append(Shard(str(path), start, offset, first_line, count))
                start, first_line, count = offset, next_line, 0
    if offset > start:
        shards.append(Shard(str(path), start, offset, first_line, count))
    return shards


def screen_shard(shard: Shard, config: CompletenessConfig) -> list[ScreenRow]:
    with open(shard.path, "rb") as handle:
        handle.seek(shard.start)
        data = handle.read(shard.end - shard.start)
    rows: list[ScreenRow] = []
    for number, raw in enumerate(data.split(b"\n"), start=shard.first_line):
        if raw.strip():
            rows.append(screen_line(shard.path, number, raw, config))
    return rows


def screen_line(path: str, number: int, raw: bytes, config: CompletenessConfig) -> ScreenRow:
    row = ScreenRow(line=number, id="", department="", drop="", record="", error="")
    try:
        consultation = _parse(path, number, raw)
    except DataError as exc:  # returned, not raised: it must cross process boundaries intact
        row["error"] = json.dumps([exc.field, exc.message], ensure_ascii=False)
        return row
    row["id"], row["department"] = consultation.id, consultation.department
    drop = image_filter(consultation) or completeness_filter(consultation, config)
    if drop is None:
        row["record"] = consultation.model_dump_json()
    else:
        row["drop"] = drop.model_dump_json()
    return row


def row_error(path: str, row: ScreenRow) -> DataError:
    field, message = json.loads(row["error"])
    return DataError(path, row["line"], field, message)


def _parse(path: str, number: int, raw: bytes) -> Consultation:
    data = parse_json_line(path, number, raw)  # the one line parser every command shares
    try:
        return Consultation.model_validate(data)
    except ValidationError as exc:
        raise DataError.from_validation(path, number, exc) from None
    except RecursionError:
        raise DataError(path, number, "<record>", "nested too deeply to read") from None
