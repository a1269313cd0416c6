"""Open a release: refuse until its DUA is accepted, check every checksum, give schema models."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from medrealmm.io import DataError, file_sha256, read_parquet_rows, resolve_image
from medrealmm.release import hf_images, layout
from medrealmm.release.dua import Acceptance, require_acceptance
from medrealmm.schema import Consultation, ImageRef, Instance, Rubric
from medrealmm.store.derived import STALE_FILE, stale_note

M = TypeVar("M", bound=BaseModel)


class ReleaseIntegrityError(ValueError):
    """A file is missing, added or changed since the release was built."""


@dataclass(frozen=True)
class Release:
    root: Path
    manifest: dict[str, Any]
    acceptance: Acceptance
    consultations: list[Consultation]
    instances: list[Instance]
    rubrics: list[Rubric]

    @property
    def version(self) -> str:
        return str(self.manifest["version"])

    def image_path(self, ref: ImageRef) -> Path:
        return resolve_image(self.root, ref)


def _manifest_json(path: Path) -> object:
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None


def is_release(root: Path) -> bool:
    """``root`` holds a release manifest (not a corpus build's ``manifest.json``)."""
    path = root / layout.MANIFEST
    return path.is_file() and layout.is_release_manifest(_manifest_json(path))


def read_manifest(root: Path) -> dict[str, Any]:
    path = root / layout.MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{root} is not a release: it has no {layout.MANIFEST}")
    manifest = _manifest_json(path)
    if not isinstance(manifest, dict) or not layout.is_release_manifest(manifest):
        raise ValueError(
            f"{path}: not a release manifest (no format or file checksums; a corpus build's "
            "manifest.json has the same name): give a release folder"
        )
    if manifest.get("format") != layout.FORMAT:
        raise ValueError(f"{path}: release format {manifest.get('format')!r} is not supported")
    return manifest


def dua_path(root: Path, manifest: dict[str, Any]) -> Path:
    """The release's DUA, checked against the manifest so an edited agreement is never accepted."""
    path = root / manifest["dua"]["file"]
    if not path.is_file():
        raise ReleaseIntegrityError(f"{root}: the release is missing its {path.name}")
    if file_sha256(path) != manifest["dua"]["sha256"]:
        raise ReleaseIntegrityError(f"{path}: does not match the DUA recorded in the manifest")
    return path


#: What a Hugging Face Hub download adds beside a release's files (git attributes for LFS,
#: the hub client's download metadata): not part of the release, never checksummed.
HUB_FILES = (".gitattributes",)
HUB_FOLDERS = (".cache/huggingface/", ".huggingface/")


def _hub_housekeeping(name: str) -> bool:
    return name in HUB_FILES or name.startswith(HUB_FOLDERS)


def _walk(root: Path) -> tuple[set[str], list[str]]:
    """Regular files under ``root`` (relative names) and every symbolic link, never followed:
    a link would let a checksum vouch for a file outside the release."""
    files: set[str] = set()
    links: list[str] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        base = Path(folder)
        links += [
            (base / name).relative_to(root).as_posix()
            for name in dirs
            if (base / name).is_symlink()
        ]
        for name in names:
            path = base / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                links.append(relative)
            elif path.is_file():
                files.add(relative)
    return files, sorted(link for link in links if not _hub_housekeeping(link))


def integrity_problems(root: Path, manifest: dict[str, Any]) -> list[str]:
    """Every file missing, added or changed, and every symbolic link (refused, not
    followed); a Hugging Face copy's hub files are allowed."""
    expected: dict[str, str] = manifest["files"]
    files, links = _walk(root)
    unlisted = (
        layout.MANIFEST,
        layout.SIGNATURE,
    )  # the manifest cannot list itself or its signature
    present = {name for name in files if name not in unlisted and not _hub_housekeeping(name)}
    problems = [f"symbolic link (not allowed in a release): {name}" for name in links]
    problems += [f"missing: {name}" for name in sorted(set(expected) - present)]
    problems += [f"not part of the release: {name}" for name in sorted(present - set(expected))]
    problems += [
        f"changed: {name}"
        for name in sorted(set(expected) & present)
        if file_sha256(root / name) != expected[name]
    ]
    return problems


def refuse_stale(root: Path) -> None:
    """A release its run marked stale (``store.derived``: it holds withdrawn or dropped cases)
    is never verified or evaluated."""
    note = stale_note(root)
    if note is not None:
        raise ReleaseIntegrityError(
            f"{root} is marked stale ({root / STALE_FILE}): {note} Rebuild it with `medrealmm "
            "release build`"
        )


def verify_release(root: Path | str) -> dict[str, Any]:
    root = Path(root)
    manifest = read_manifest(root)
    refuse_stale(root)
    problems = integrity_problems(root, manifest)
    if problems:
        shown = "; ".join(problems[:5]) + (
            f" (and {len(problems) - 5} more)" if problems[5:] else ""
        )
        raise ReleaseIntegrityError(f"{root}: release does not match its manifest: {shown}")
    return manifest


def _rows(root: Path, table: str, manifest: dict[str, Any], model: type[M]) -> list[M]:
    spec = manifest["tables"][table]
    path = root / spec["file"]
    records: list[M] = []
    skip = (hf_images.COLUMN,) if table in hf_images.TABLES else ()  # datasets' own copy
    for number, row in enumerate(read_parquet_rows(path, skip=skip), start=1):
        for column in spec["json_columns"]:
            if isinstance(row.get(column), str):
                row[column] = json.loads(row[column])
        try:
            records.append(model.model_validate(row))
        except ValidationError as exc:
            raise DataError.from_validation(path, number, exc) from None
    return records


def load_release(root: Path | str, *, verify: bool = True) -> Release:
    """Refuses (``DUANotAccepted``) until ``medrealmm release accept-dua`` has been run."""
    root = Path(root)
    manifest = read_manifest(root)
    refuse_stale(root)
    acceptance = require_acceptance(dua_path(root, manifest), root, str(manifest["name"]))
    if verify:
        verify_release(root)
    return Release(
        root=root,
        manifest=manifest,
        acceptance=acceptance,
        consultations=_rows(root, "consultations", manifest, Consultation),
        instances=_rows(root, "instances", manifest, Instance),
        rubrics=_rows(root, "rubrics", manifest, Rubric),
    )
