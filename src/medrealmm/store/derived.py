"""Folders a run writes from its rows, ``release/`` and ``report/``, and which stages each is
made from: the one table of what goes stale when rows change.

They must never outlive the rows they were made from. ``RunStore`` calls its one hook,
``_rows_changing(stage)``, before any row of a stage is written, replaced or deleted (rows
dropped as stale with it included), and the hook removes what ``derived_for(stage)`` names.
A chain run also removes the folders its later steps write before its first stage, so a
refused or killed step leaves none, never a stale one; the chain's release and report steps
then write them again from the rows as they are. Only a folder that holds what the chain
writes there (a release manifest, a report page) is removed.
"""

from __future__ import annotations

import functools
import shutil
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
