"""Parquet export: nested fields are kept as JSON strings so any reader can load them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel


def _flatten(record: BaseModel) -> dict[str, object]:
    row: dict[str, object] = {}
    for key, value in record.model_dump(mode="json").items():
        row[key] = (
            json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value
        )
    return row


def write_parquet(path: Path | str, records: Iterable[BaseModel]) -> int:
    rows = [_flatten(record) for record in records]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows)
    # Fixed writer options so building twice gives byte-identical files.
    pq.write_table(table, path, compression="zstd", write_statistics=False)
    return len(rows)


def read_parquet_rows(path: Path | str) -> list[dict[str, object]]:
    return pq.read_table(path).to_pylist()
