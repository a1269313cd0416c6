"""Check a consultations dataset for everything later stages rely on, before any stage runs.

``medrealmm validate`` calls this; finding a duplicate id or a broken photo here costs a second,
finding it after hours of de-identification costs the run.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from medrealmm.io.errors import DataError, duplicate_id
from medrealmm.io.images import check_image
from medrealmm.io.jsonl import iter_jsonl_lines
from medrealmm.schema import Consultation

CORPUS_FILE = "consultations.jsonl"
#: Largest image accepted, in pixels (width x height), read from the header before decoding.
DEFAULT_MAX_PIXELS = int(os.environ.get("MEDREALMM_MAX_PIXELS", 50_000_000))
#: A rebuild that would lose more than this share of a run's consultations needs --allow-shrink.
SHRINK_LIMIT = 0.5


@dataclass
class DatasetSummary:
    path: Path
    departments: Counter[str] = field(default_factory=Counter)
    images: int = 0
    ids: list[str] = field(default_factory=list)


def dataset_file(path: Path | str) -> Path:
    """A JSONL file as given, or a dataset folder's ``consultations.jsonl``."""
    path = Path(path)
    if path.is_dir():
        path = path / CORPUS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found")
    return path


def clock_problem(case: Consultation) -> tuple[str, str] | None:
    """(field, message) for the first timestamp out of order, or one that carries a UTC
    offset where the first event's does not (or the reverse): local and zoned times cannot be
    ordered without guessing the zone, so a consultation uses one kind throughout."""
    zoned = case.events[0].timestamp.utcoffset() is not None
    for index, (before, after) in enumerate(zip(case.events, case.events[1:], strict=False)):
        field = f"events.{index + 1}.timestamp"
        if (after.timestamp.utcoffset() is not None) != zoned:
            first = "has a UTC offset" if zoned else "has none"
            message = (
                f"{after.timestamp.isoformat()} {'lacks' if zoned else 'has'} a UTC offset and "
                f"events.0.timestamp {first}: give every timestamp of a consultation an offset "
                "(such as +08:00), or none"
            )
            return field, message
        if after.timestamp < before.timestamp:
            return field, f"timestamp {after.timestamp} is before the previous event's"
    return None


def check_dataset(
    path: Path | str, *, max_pixels: int = DEFAULT_MAX_PIXELS, limit: int | None = None
) -> DatasetSummary:
    """Schema, unique ids, events in time order, every image present, inside the dataset
    folder, within the pixel cap and decodable. Raises the first problem as a DataError.

    The one validator: ``validate`` and every command that ingests a file (``corpus build``,
    ``run``, ``demo``, ``mccp extract --from raw``) call it before writing anything, so they
    refuse the same files with the same error. ``limit``: only the first N consultations."""
    source = dataset_file(path)
    root = source.parent
    summary = DatasetSummary(source)
    first_line: dict[str, int] = {}
    for number, case in iter_jsonl_lines(source, Consultation):
        if limit is not None and len(first_line) >= limit:
            break
        if case.id in first_line:
            raise duplicate_id(source, number, case.id, first_line[case.id])
        first_line[case.id] = number
        problem = clock_problem(case)
        if problem:
            raise DataError(source, number, *problem)
        for e_index, event in enumerate(case.events):
            for i_index, ref in enumerate(event.images):
                where = f"events.{e_index}.images.{i_index}.path"
                problem = check_image(root, ref.path, max_pixels)
                if problem:
                    raise DataError(source, number, where, problem)
                summary.images += 1
        summary.departments[case.department] += 1
        summary.ids.append(case.id)
    if not first_line:
        # An empty export is almost always a failed dump; passing it would build an empty run.
        raise DataError(source, 1, "<file>", "no consultations in this file")
    return summary


def check_shrink(
    run: Path, previous: Collection[str], incoming: Collection[str], *, allow: bool
) -> None:
    """Refuse a rebuild that would drop most of the consultations a run already holds (an
    emptied or truncated export, a wrong file): every row made from them would go with them.
    ``allow`` (``--allow-shrink``) says the smaller input is meant."""
    if allow or not previous:
        return
    lost = len(set(previous) - set(incoming))
    if lost > SHRINK_LIMIT * len(previous):
        raise ValueError(
            f"{run} holds a run over {len(previous)} consultations and this input would drop "
            f"{lost} of them ({lost / len(previous):.0%}), with every row made from them; "
            "nothing was changed. Check the input file, or pass --allow-shrink (allow_shrink: "
            "true in a pipeline YAML) to rebuild from it"
        )
