"""Folders a run writes from its rows: ``release/`` and ``report/``.

They must never outlive the rows they were made from. So every command that is about to
change rows from an input (ingest, ``corpus build``) and every chain run removes them first,
and the chain's release and report steps write them again from the rows as they are then: a
refused or killed step leaves none, never a stale one. Only a folder that holds what the
chain writes there (a release manifest, a report page) is removed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: folder under the run -> the file that shows the chain wrote it
DERIVED = {"release": "manifest.json", "report": "index.html"}


def remove_derived(run_dir: Path, names: tuple[str, ...] = tuple(DERIVED)) -> list[str]:
    """Remove the derived folders named (all by default); returns those removed."""
    removed = []
    for name in names:
        folder = run_dir / name
        if (folder / DERIVED[name]).is_file():
            shutil.rmtree(folder)
            removed.append(name)
    return removed
