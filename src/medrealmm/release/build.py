"""``release build``: write one versioned release folder from a run store.

The folder is assembled in a temporary sibling and renamed into place, so a killed build never
leaves half a release, and a rebuild of the same store, withdrawals and version gives the same
bytes (no timestamps, fixed ordering, images named by content).
"""

from __future__ import annotations

import glob
import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medrealmm.io import file_sha256, resolve_image, write_parquet
from medrealmm.release import arrow, hf_images, layout, texts
from medrealmm.release.layout import ReleaseInfo
from medrealmm.release.loader import is_release
from medrealmm.release.sources import ReleaseSources, UnreviewedReleaseError, collect
from medrealmm.release.withdrawals import Withdrawal, all_withdrawals, default_register
from medrealmm.schema import ImageOrigin, ImageRef
from medrealmm.store import RunStore, stages

log = logging.getLogger("medrealmm.release")


@dataclass(frozen=True)
class BuildResult:
    out: Path
    manifest: dict[str, Any]
    shipped: dict[str, list[str]]  # consultation and instance ids (``layout.shipped_cases``)
    added: list[str]  # consultations the previous version did not ship


def _check_target(out: Path) -> None:
    """Only an empty folder or an earlier release may be replaced: never a user's other files."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} is a file; the release needs a folder")
    if out.exists() and any(out.iterdir()) and not is_release(out):
        raise ValueError(f"{out} exists, is not empty and holds no release; choose another folder")


#: A build's staging folder is ``.NAME.pid<PID>-<random>.building`` beside ``NAME``.
STAGING_PID = "pid"


def clean_killed_builds(out: Path) -> list[Path]:
    """Remove the staging folders that killed builds of ``out`` left beside it (each a partial
    copy of released data), and say so; a build still running (its pid alive) is left be."""
    removed = []
    for folder in sorted(out.parent.glob(f".{glob.escape(out.name)}.*.building")):
        middle = folder.name[len(out.name) + 2 : -len(".building")]
        pid = middle.removeprefix(STAGING_PID).partition("-")[0]
        if middle.startswith(STAGING_PID) and pid.isdigit() and _running(int(pid)):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    if removed:
        log.warning(
            "removed %d partial release builds a killed build left: %s",
            len(removed),
            ", ".join(str(f) for f in removed),
        )
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process builds one release at a time: an old folder of ours
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _hash_images(sources: ReleaseSources) -> dict[str, str]:
    """Each shipped image's sha256, checked against the one de-identification recorded: an
    image changed since it was masked (or read from another run's folder) is refused."""
    hashes: dict[str, str] = {}
    recorded = layout.recorded_hashes(sources.consultations, sources.instances)
    for path in sorted(layout.image_paths(sources.consultations, sources.instances)):
        ref = ImageRef(path=path, origin=ImageOrigin.PATIENT)
        file = resolve_image(sources.image_root, ref)
        hashes[path] = file_sha256(file)
        if path in recorded and recorded[path] != hashes[path]:
            raise ValueError(
                f"{file}: not the image de-identification wrote (sha256 {hashes[path][:12]}…, "
                f"recorded {recorded[path][:12]}…); it changed since it was masked. Rerun "
                "`medrealmm deid run` on the run, or restore the image; nothing was released"
            )
    return hashes


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")


def _checksums(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): file_sha256(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def check_reviewed(sources: ReleaseSources, allow_unreviewed: bool) -> list[str]:
    """The review gaps of what would ship; refused unless ``allow_unreviewed`` (the paper
    releases only cases past both review passes, with physician-approved rubrics)."""
    gaps = sources.review_gaps()
    if gaps and not allow_unreviewed:
        raise UnreviewedReleaseError(
            f"the release waits for review: {'; '.join(gaps)}. Finish the review (`medrealmm "
            "corpus review`, `medrealmm rubric import-feedback` or the review app), or release "
            "anyway with --allow-unreviewed (release: {allow_unreviewed: true} in a pipeline "
            "YAML), which the manifest and the dataset card record"
        )
    return gaps


def write_release(
    sources: ReleaseSources,
    withdrawals: list[Withdrawal],
    info: ReleaseInfo,
    out: Path,
    *,
    allow_unreviewed: bool = False,
    previous: tuple[str, list[str]] | None = None,
) -> BuildResult:
    """Everything but reading the store: filter, copy, write, checksum, manifest.
    ``previous``: the version before this one and the consultations it shipped, so the
    changelog lists the cases this one adds."""
    layout.check_version(info.version)
    if info.dua is None:
        raise ValueError(
            "give the dataset's own Data Use Agreement (release build --dua FILE): the bundled "
            "agreement is the demo's, used only for the demo's run"
        )
    out = Path(out)
    _check_target(out)
    shipped = layout.without_withdrawn(sources, (w.case_id for w in withdrawals))
    added = layout.added_cases(shipped, previous[1]) if previous else []
    gaps = check_reviewed(shipped, allow_unreviewed)
    hashes = _hash_images(shipped)
    moves = layout.image_moves(shipped, hashes)
    released = layout.rebase_images(shipped, hashes)

    out.parent.mkdir(parents=True, exist_ok=True)
    clean_killed_builds(out)
    staging = Path(
        tempfile.mkdtemp(
            dir=out.parent, prefix=f".{out.name}.{STAGING_PID}{os.getpid()}-", suffix=".building"
        )
    )
    try:
        rows = {
            table: write_parquet(
                staging / layout.DATA_DIR / f"{table}.parquet",
                getattr(released, table),
                arrow.SCHEMAS[table],
                json_columns=arrow.JSON_COLUMNS[table],
            )
            for table in layout.TABLES
        }
        for target, source in sorted(moves.items()):
            (staging / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(sources.image_root / source, staging / target)
        hf_images.add_image_column(  # the instances' images as datasets.Image
            staging / layout.DATA_DIR / "instances.parquet",
            staging,
            [
                [r.path for e in instance.context for r in e.images]
                for instance in released.instances
            ],
        )
        dua = info.dua
        _write_text(staging / layout.DUA_FILE, dua)
        counts = layout.counts(released, images=len(moves), withdrawn=len(withdrawals))
        _write_text(
            staging / layout.CHANGELOG,
            texts.changelog(
                info.title,
                info.version,
                counts,
                layout.changelog_entries(withdrawals),
                previous=previous[0] if previous else None,
                added=added,
            ),
        )
        _write_text(
            staging / layout.CITATION, texts.citation(info.title, info.version, info.authors)
        )
        dua_sha = hashlib.sha256(dua.encode("utf-8")).hexdigest()
        described = layout.manifest(
            info,
            released,
            images=len(moves),
            withdrawn=len(withdrawals),
            dua_sha256=dua_sha,
            files={},
            review=layout.review_record(allow_unreviewed, gaps),
        )
        if previous:
            described["previous_version"] = previous[0]
            described["counts"] = {**counts, "added_cases": len(added)}
        _write_text(staging / layout.CARD, texts.dataset_card(described, rows))
        final = {**described, "files": _checksums(staging)}
        _write_text(
            staging / layout.MANIFEST,
            json.dumps(final, ensure_ascii=False, indent=2, sort_keys=True) + "\n",
        )
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return BuildResult(out=out, manifest=final, shipped=layout.shipped_cases(shipped), added=added)


def release_store(
    store: RunStore,
    out: Path | str,
    info: ReleaseInfo,
    *,
    register: Path | str,
    allow_unreviewed: bool = False,
) -> BuildResult:
    """Release the store's de-identified work minus every withdrawn case. Each version's
    cases are kept in the run (``RELEASE_VERSIONS_META``): a later version's changelog lists
    the cases it adds to the latest version before it."""
    versions = dict(store.get_meta(stages.RELEASE_VERSIONS_META) or {})
    before = layout.previous_version(versions, info.version)
    result = write_release(
        collect(store),
        all_withdrawals(register, store),
        info,
        Path(out),
        allow_unreviewed=allow_unreviewed,
        previous=(before, versions[before]["consultations"]) if before else None,
    )
    store.set_meta(stages.RELEASE_VERSIONS_META, {**versions, info.version: result.shipped})
    return result


def build_release(
    store_path: Path | str,
    out: Path | str,
    info: ReleaseInfo,
    *,
    register: Path | str | None = None,
    allow_unreviewed: bool = False,
) -> BuildResult:
    """``release_store`` on a run folder; the register defaults to the one beside the store."""
    register = Path(register) if register else default_register(store_path)
    with RunStore(store_path) as store:
        return release_store(store, out, info, register=register, allow_unreviewed=allow_unreviewed)
