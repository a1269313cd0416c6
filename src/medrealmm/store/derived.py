"""Folders a run writes from its rows, ``release/`` and ``report/``, and which stages each is
made from: the one table of what goes stale when rows change.

They must never outlive the rows they were made from. ``RunStore`` calls its one hook,
``_rows_changing(stage)``, before any row of a stage is written, replaced or deleted (rows
dropped as stale with it included), and the hook removes what ``derived_for(stage)`` names.
A chain run also removes the folders its later steps write before its first stage, so a
refused or killed step leaves none, never a stale one; the chain's release and report steps
then write them again from the rows as they are. Only a folder that holds what the chain
writes there (a release manifest, a report page) is removed.

Folders kept beside the run (older versions ``release-*/``, the ``mccp/`` and ``rubric/``
exports) are never removed: when rows are dropped or a case is withdrawn, each that holds a
case the run no longer holds is marked with a ``STALE`` file naming them (``refresh_stale``).
"""

from __future__ import annotations

import functools
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from medrealmm.store import stages

#: folder under the run -> the file that shows the chain wrote it
DERIVED = {"release": "manifest.json", "report": "index.html"}
#: folder -> the command that writes it again, named when a row write removes it
REBUILD = {"release": "`medrealmm release build`", "report": "`medrealmm report`"}

#: Stages only the report is made from: evaluation, physicians' grading panel, the corpus
#: review queue's bookkeeping, MCCP validation and rubric feedback. What a release ships
#: (``release.sources``: corpus.final / corpus.deid, instances, rubric rounds and R*,
#: withdrawals) is written to other stages, which the review and feedback steps write when a
#: case or rubric is approved.
REPORT_ONLY_PREFIXES = ("eval.", "panel.", "corpus.review.")
REPORT_ONLY = frozenset({stages.MCCP_VALIDATION, stages.RUBRIC_FEEDBACK})


@functools.cache
def derived_for(stage: str) -> tuple[str, ...]:
    """The derived folders made from ``stage``'s rows; any stage not named above (the
    pipeline's, and any new one) counts for both."""
    if stage in REPORT_ONLY or stage.startswith(REPORT_ONLY_PREFIXES):
        return ("report",)
    return tuple(DERIVED)


def remove_derived(run_dir: Path, names: tuple[str, ...] = tuple(DERIVED)) -> list[str]:
    """Remove the derived folders named (all by default); returns those removed."""
    removed = []
    for name in names:
        folder = run_dir / name
        if (folder / DERIVED[name]).is_file():
            shutil.rmtree(folder)
            removed.append(name)
    return removed


# -- folders kept beside the run: marked stale, never removed ---------------------------------

#: The marker a folder made from rows that have since changed gets; ``release verify`` and
#: ``eval run`` refuse a release holding it, and a rebuild of the folder replaces it.
STALE_FILE = "STALE"
#: Exports of the run's rows (physicians may have filled in their files: never removed).
EXPORT_FOLDERS = ("mccp", "rubric")
#: Older release versions kept beside the run's ``release/`` (the demo's ``release-0.2/``).
KEPT_RELEASES = "release-*"


@dataclass(frozen=True)
class CurrentCases:
    """The cases the run's rows hold now: what a kept folder may still hold."""

    consultations: frozenset[str]  # releasable (corpus.final / corpus.deid), not withdrawn
    instances: frozenset[str]  # MCCP instances of consultations not withdrawn


def kept_folders(run_dir: Path) -> list[Path]:
    """The kept folders beside a run that hold cases: older releases and the exports."""
    releases = [f for f in sorted(run_dir.glob(KEPT_RELEASES)) if (f / "manifest.json").is_file()]
    return releases + [run_dir / name for name in EXPORT_FOLDERS if (run_dir / name).is_dir()]


def _jsonl_ids(path: Path, fields: tuple[str, ...]) -> set[str]:
    ids: set[str] = set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ids
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            ids.update(str(row[f]) for f in fields if isinstance(row.get(f), str))
    return ids


def _parquet_ids(path: Path) -> set[str]:
    import pyarrow.parquet as pq

    try:
        return {str(v) for v in pq.read_table(path, columns=["id"]).column("id").to_pylist()}
    except (OSError, KeyError, ValueError):
        return set()


def gone_cases(folder: Path, now: CurrentCases) -> list[str]:
    """The consultations and instances ``folder`` holds that the run no longer holds (dropped
    by a rebuild or a shrink, or withdrawn)."""
    if folder.name in EXPORT_FOLDERS:
        held = set().union(*(_jsonl_ids(p, ("id", "instance_id")) for p in folder.glob("*.jsonl")))
        return sorted(held - now.instances)
    consultations = _parquet_ids(folder / "data" / "consultations.parquet")
    instances = _parquet_ids(folder / "data" / "instances.parquet")
    return sorted((consultations - now.consultations) | (instances - now.instances))


def refresh_stale(folders: list[Path], now: CurrentCases) -> list[tuple[Path, list[str]]]:
    """Mark each folder holding cases the run no longer holds with ``STALE`` (naming them,
    ids only), and drop the marker of one that holds none now; returns the folders newly
    marked (or marked with other cases)."""
    marked = []
    for folder in folders:
        marker = folder / STALE_FILE
        gone = gone_cases(folder, now)
        if not gone:
            marker.unlink(missing_ok=True)
            continue
        shown = ", ".join(gone[:20]) + (f" and {len(gone) - 20} more" if gone[20:] else "")
        text = (
            f"This folder holds {len(gone)} cases the run no longer holds (withdrawn, or dropped "
            f"when its rows changed): {shown}.\nDo not publish or evaluate it; rebuild it "
            f"({REBUILD_KEPT.get(folder.name, REBUILD['release'])}).\n"
        )
        if not marker.is_file() or marker.read_text(encoding="utf-8", errors="replace") != text:
            marker.write_text(text, encoding="utf-8")
            marked.append((folder, gone))
    return marked


def stale_note(folder: Path) -> str | None:
    """The first line of ``folder``'s ``STALE`` marker, or None when it has none."""
    marker = folder / STALE_FILE
    if not marker.is_file():
        return None
    return marker.read_text(encoding="utf-8", errors="replace").splitlines()[0]


#: kept folder -> how to make it again
REBUILD_KEPT = {"mccp": "`medrealmm mccp extract`", "rubric": "`medrealmm rubric export-round`"}
