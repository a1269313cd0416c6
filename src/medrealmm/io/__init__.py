"""File I/O at the edges: JSONL, Parquet and images."""

from medrealmm.io.errors import DataError
from medrealmm.io.images import MissingImageError, file_sha256, image_data_url, resolve_image
from medrealmm.io.jsonl import append_jsonl, atomic_writer, iter_jsonl, write_jsonl
from medrealmm.io.parquet import read_parquet_rows, write_parquet

__all__ = [
    "DataError",
    "MissingImageError",
    "append_jsonl",
    "atomic_writer",
    "file_sha256",
    "image_data_url",
    "iter_jsonl",
    "read_parquet_rows",
    "resolve_image",
    "write_jsonl",
    "write_parquet",
]
