"""The Data Use Agreement gate: no release loads until its user has accepted its DUA.

Acceptances live in a user-level JSON file (``~/.config/medrealmm/dua-acceptances.json``, or
the file named by ``MEDREALMM_DUA_FILE``), one record per dataset name and DUA text (by
sha256): accepting one dataset's agreement (the demo's) unlocks no other dataset, even one that
ships the same text, and a changed agreement in a later version must be accepted again.
Records written before acceptances named their dataset unlock nothing: accept again.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.io import atomic_writer, file_sha256

DUA_FILE_ENV = "MEDREALMM_DUA_FILE"


class DUANotAccepted(PermissionError):
    """Raised by the loader; the message says how to accept."""


class Acceptance(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="Who accepted (a person, not a team).")
    affiliation: str = ""
    dua_sha256: str
    dataset: str = Field(
        default="", description="The release's dataset name (manifest ``name``) it unlocks."
    )
    release: str = Field(description="Name and version of the release the DUA came with.")
    accepted_at: datetime


def acceptance_file() -> Path:
    configured = os.environ.get(DUA_FILE_ENV)
    if configured:
        return Path(configured)
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "medrealmm" / "dua-acceptances.json"


def read_acceptances(path: Path | None = None) -> list[Acceptance]:
    path = path or acceptance_file()
    if not path.exists():
        return []
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return [Acceptance.model_validate(item) for item in raw]
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not a valid DUA acceptance file ({exc})") from None


def find_acceptance(dua_sha256: str, dataset: str, path: Path | None = None) -> Acceptance | None:
    return next(
        (
            a
            for a in read_acceptances(path)
            if a.dua_sha256 == dua_sha256 and a.dataset == dataset and dataset
        ),
        None,
    )


def record_acceptance(
    dua_path: Path,
    *,
    name: str,
    dataset: str,
    release: str,
    affiliation: str = "",
    when: datetime | None = None,
    path: Path | None = None,
) -> Acceptance:
    path = path or acceptance_file()
    acceptance = Acceptance(
        name=name,
        affiliation=affiliation,
        dua_sha256=file_sha256(dua_path),
        dataset=dataset,
        release=release,
        accepted_at=when or datetime.now(UTC),
    )
    kept = [
        a
        for a in read_acceptances(path)
        if (a.dua_sha256, a.dataset) != (acceptance.dua_sha256, dataset)
    ]
    payload = [a.model_dump(mode="json") for a in [*kept, acceptance]]
    with atomic_writer(path) as handle:
        json.dump(payload, handle, ensure_ascii=False, indent=2)
        handle.write("\n")
    return acceptance


def require_acceptance(dua_path: Path, release_dir: Path, dataset: str) -> Acceptance:
    acceptance = find_acceptance(file_sha256(dua_path), dataset)
    if acceptance is None:
        raise DUANotAccepted(
            f"the Data Use Agreement of {release_dir} ({dua_path.name}, dataset {dataset!r}) "
            f"has not been accepted on this account; read it, then run: medrealmm release "
            f"accept-dua {release_dir}"
        )
    return acceptance
