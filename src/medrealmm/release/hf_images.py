"""The instances' images as a Hugging Face ``datasets.Image`` column.

``datasets.load_dataset`` on a release folder (or its Hub copy) then hands each instance's
images as PIL images: the table carries an ``images`` column of ``{bytes, path}`` structs (the
Hub's own image layout, bytes inside, so it loads from any working folder) and the Parquet
schema metadata names it ``List(Image)``, as ``datasets`` writes it. The files under
``images/`` stay the source of truth for medrealmm (checksummed, read by path), and the loader
skips this column. The list form of the feature is read by every ``datasets`` since 2.x.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

#: The column, and the tables that carry it (an instance's context images, in order).
COLUMN = "images"
TABLES = ("instances",)
FEATURES = {"info": {"features": {COLUMN: [{"_type": "Image"}]}}}


def add_image_column(path: Path, root: Path, images: Sequence[Sequence[str]]) -> None:
    """Append the column to the Parquet table at ``path``: row i gets the files ``images[i]``
    names (paths relative to the release folder ``root``), bytes and path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pq.read_table(path)
    if table.num_rows != len(images):
        raise ValueError(f"{path}: {table.num_rows} rows, images for {len(images)}")
    values = [[{"bytes": (root / p).read_bytes(), "path": p} for p in row] for row in images]
    table = table.append_column(
        pa.field(COLUMN, pa.list_(image)), pa.array(values, pa.list_(image))
    )
    metadata = {**(table.schema.metadata or {}), b"huggingface": json.dumps(FEATURES).encode()}
    # the writer options of ``write_parquet``: building twice gives byte-identical files
    pq.write_table(
        table.replace_schema_metadata(metadata), path, compression="zstd", write_statistics=False
    )
