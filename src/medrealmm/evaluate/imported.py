"""Replies produced elsewhere, scored with the same rubrics and grader as any model.

This is the paper's Table 3 (physicians answering deliberately, without time pressure) and
how a team with its own inference stack uses the benchmark: one JSON line per instance,
``{"instance_id": "...", "reply": "..."}``. An instance the file does not answer is stored
as a failed reply, so its case shows as incomplete rather than vanishing.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from medrealmm.io import DataError, file_sha256
from medrealmm.io.jsonl import BOM, parse_json_line
from medrealmm.llm import OFFLINE_NAME
from medrealmm.store import RunStore, stages

if TYPE_CHECKING:
    from medrealmm.evaluate.run import EvalOutcome


class ImportedReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    instance_id: str = Field(min_length=1)
    reply: str = Field(min_length=1)


RESERVED_NAMES = ("online", OFFLINE_NAME)


#: Largest reply accepted, in UTF-8 bytes (``--max-reply-bytes``): a reply goes into the
#: grader's prompt once per criterion, so one runaway reply would cost memory and calls by
#: the criterion; the longest physician reply is a few kilobytes.
DEFAULT_MAX_REPLY_BYTES = 1_000_000
#: A line may spend up to 6 bytes per reply byte (``\\uXXXX`` escapes) plus the id around it.
_LINE_SLACK = 65_536


def _numbered(path: Path, max_reply_bytes: int) -> Iterator[tuple[int, ImportedReply]]:
    """Records with their line numbers (blank lines skipped), read through the one JSONL
    parser, never more than one capped line in memory."""
    limit = 6 * max_reply_bytes + _LINE_SLACK
    with path.open("rb") as handle:
        for number in itertools.count(1):
            line = handle.readline(limit + 1)
            if not line:
                return
            if len(line) > limit:
                raise DataError(
                    path,
                    number,
                    "reply",
                    f"the line is over {limit:,} bytes; a reply may be at most "
                    f"{max_reply_bytes:,} bytes (--max-reply-bytes)",
                )
            if not line.strip() or (number == 1 and line.strip() == BOM):
                continue
            raw = parse_json_line(path, number, line)
            try:
                record = ImportedReply.model_validate(raw)
            except ValidationError as exc:
                raise DataError.from_validation(path, number, exc) from None
            size = len(record.reply.encode("utf-8"))
            if size > max_reply_bytes:
                raise DataError(
                    path,
                    number,
                    "reply",
                    f"the reply is {size:,} bytes; at most {max_reply_bytes:,} are accepted "
                    "(--max-reply-bytes)",
                )
            yield number, record


def read_replies(
    path: Path | str, known: set[str], *, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
) -> tuple[dict[str, str], str]:
    """instance id -> reply, and the file's sha256. Unknown or repeated ids are errors that
    name the line: a reply must never be scored against the wrong case or silently twice."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no replies file at {path}")
    replies: dict[str, str] = {}
    for number, record in _numbered(path, max_reply_bytes):
        if record.instance_id not in known:
            raise DataError(path, number, "instance_id", f"unknown instance {record.instance_id!r}")
        if record.instance_id in replies:
            raise DataError(path, number, "instance_id", f"{record.instance_id!r} given twice")
        replies[record.instance_id] = record.reply
    if not replies:
        raise DataError(path, 1, "<file>", "no replies in the file")
    return replies, file_sha256(path)


def check_name(name: str) -> str:
    if not name.strip() or name in RESERVED_NAMES or "|" in name:
        raise ValueError(
            f"--name {name!r} is not allowed: give a new row name without '|' "
            f"(not {', '.join(RESERVED_NAMES)})"
        )
    return name


def import_responses(
    store: RunStore,
    path: Path | str,
    name: str,
    *,
    images: bool = True,
    grader: str = "offline",
    models_config: Path | None = None,
    grader_images: bool | None = None,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
) -> EvalOutcome:
    """Store the file's replies as row ``name`` and grade and score them like any model's;
    ``images`` records whether their authors saw the patient's images."""
    from medrealmm.evaluate.run import EvalSettings, run_evaluation

    known = store.keys(stages.MCCP_INSTANCE)
    replies, digest = read_replies(path, known, max_reply_bytes=max_reply_bytes)
    settings = EvalSettings(
        model=check_name(name),
        images=images,
        grader=grader,
        models_config=models_config,
        grader_images=grader_images,
        replies=replies,
        replies_sha256=digest,
    )
    return run_evaluation(store, settings)
