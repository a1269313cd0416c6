"""Check a consultations dataset for everything later stages rely on, before any stage runs.

``medrealmm validate`` calls this; finding a duplicate id or a broken photo here costs a second,
finding it after hours of de-identification costs the run.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from medrealmm.io.errors import DataError, duplicate_id
from medrealmm.io.idhash import IdDigests, id_digest
from medrealmm.io.images import check_image
from medrealmm.io.jsonl import iter_jsonl_lines
from medrealmm.schema import Consultation

CORPUS_FILE = "consultations.jsonl"
#: Largest image accepted, in pixels (width x height), read from the header before decoding.
DEFAULT_MAX_PIXELS = int(os.environ.get("MEDREALMM_MAX_PIXELS", 50_000_000))
#: A rebuild that would lose more than this share of a run's consultations needs --allow-shrink.
SHRINK_LIMIT = 0.5
#: Distinct image paths remembered as checked before the memo starts over.
_CHECKED_CAP = 65_536


@dataclass
class DatasetSummary:
    path: Path
    departments: Counter[str] = field(default_factory=Counter)
    images: int = 0
    #: Every consultation's id, as a digest (the shrink guard compares them).
    ids: IdDigests = field(default_factory=IdDigests)


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
    folder, within the pixel cap and decodable. Raises the first problem (in line order) as a
    DataError.

    The one validator: ``validate`` and every command that ingests a file (``corpus build``,
    ``run``, ``demo``, ``mccp extract --from raw``) call it before writing anything, so they
    refuse the same files with the same error. ``limit``: only the first N consultations.
    Ids are kept as 8-byte digests (``IdDigests``), so memory stays flat on large files; a
    repeated digest sends a second pass over the file for the exact duplicate."""
    source = dataset_file(path)
    summary = DatasetSummary(source)
    problem: DataError | None = None
    try:
        _scan(source, summary, max_pixels, limit)
    except DataError as error:
        problem = error
    _raise_duplicate(source, summary.ids)  # a duplicate on an earlier line (or this one) first
    if problem is not None:
        raise problem
    if not summary.ids:
        # An empty export is almost always a failed dump; passing it would build an empty run.
        raise DataError(source, 1, "<file>", "no consultations in this file")
    return summary


def _scan(source: Path, summary: DatasetSummary, max_pixels: int, limit: int | None) -> None:
    """Every check but the duplicate one, made on the digests after (``_raise_duplicate``)."""
    root = source.parent
    checked: set[str] = set()  # paths already found usable: each distinct file is opened once
    for number, case in iter_jsonl_lines(source, Consultation):
        if limit is not None and len(summary.ids) >= limit:
            break
        summary.ids.add(case.id)
        problem = clock_problem(case)
        if problem:
            raise DataError(source, number, *problem)
        for e_index, event in enumerate(case.events):
            for i_index, ref in enumerate(event.images):
                if ref.path not in checked:
                    problem = check_image(root, ref.path, max_pixels)
                    if problem:
                        where = f"events.{e_index}.images.{i_index}.path"
                        raise DataError(source, number, where, problem)
                    if len(checked) >= _CHECKED_CAP:
                        checked.clear()  # memory stays flat when each reference is its own file
                    checked.add(ref.path)
                summary.images += 1
        summary.departments[case.department] += 1


def _raise_duplicate(source: Path, ids: IdDigests) -> None:
    """Raise the first repeated id among the consultations ``ids`` holds (the file's first
    ``len(ids)``), naming both lines. Only ids whose digest repeats are reread as strings; a
    digest shared by different ids (a collision) raises nothing."""
    suspects = ids.repeated()
    if not suspects:
        return
    first_line: dict[str, int] = {}
    # islice reads no line past those scanned (the one after may not parse)
    for number, case in islice(iter_jsonl_lines(source, Consultation), len(ids)):
        if id_digest(case.id) not in suspects:
            continue
        if case.id in first_line:
            raise duplicate_id(source, number, case.id, first_line[case.id])
        first_line[case.id] = number


def check_shrink(run: Path, previous: Iterable[str], incoming: IdDigests, *, allow: bool) -> None:
    """Refuse a rebuild that would drop most of the consultations a run already holds (an
    emptied or truncated export, a wrong file): every row made from them would go with them.
    ``previous``: the run's consultation ids (repeats count once); ``allow``
    (``--allow-shrink``) says the smaller input is meant."""
    if allow:
        return
    held = IdDigests(previous)
    total = held.distinct() if len(held) else 0
    if not total:
        return
    lost = held.missing_from(incoming)
    if lost > SHRINK_LIMIT * total:
        raise ValueError(
            f"{run} holds a run over {total} consultations and this input would drop "
            f"{lost} of them ({lost / total:.0%}), with every row made from them; "
            "nothing was changed. Check the input file, or pass --allow-shrink (allow_shrink: "
            "true in a pipeline YAML) to rebuild from it"
        )
