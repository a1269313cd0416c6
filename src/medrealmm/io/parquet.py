"""Parquet export: nested fields as Arrow lists and structs under an explicit schema; the
columns named in ``json_columns`` (free-form mappings) as JSON text.

pyarrow is imported where a file is written or read: ``medrealmm.io`` is imported by every
command (the report among them), most of which touch no Parquet (a tenth of a CPU-second)."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    import pyarrow as pa


def _row(record: BaseModel, json_columns: Collection[str]) -> dict[str, object]:
    row = record.model_dump(mode="json")
    for key in json_columns:
        row[key] = json.dumps(row[key], ensure_ascii=False)
    return row


def write_parquet(
    path: Path | str,
    records: Iterable[BaseModel],
    schema: pa.Schema,
    *,
    json_columns: Collection[str] = (),
) -> int:
    """Write ``records`` under ``schema``; a field the schema lacks is an error, not a loss."""
    rows = [_row(record, json_columns) for record in records]
    missing = {key for row in rows for key in row} - set(schema.names)
    if missing:
        raise ValueError(f"{path}: fields {sorted(missing)} are not in the table's schema")
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=schema)
    # Fixed writer options so building twice gives byte-identical files.
    pq.write_table(table, path, compression="zstd", write_statistics=False)
    return len(rows)


def read_parquet_rows(path: Path | str, skip: Collection[str] = ()) -> list[dict[str, object]]:
    """Every row as a dict, without the columns in ``skip`` (never read from disk)."""
    import pyarrow.parquet as pq

    columns = [name for name in pq.read_schema(path).names if name not in skip]
    return pq.read_table(path, columns=columns).to_pylist()
