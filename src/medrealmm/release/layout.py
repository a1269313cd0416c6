"""Pure pieces of a release: which rows ship, where their images go, what the texts say.

Nothing here reads the clock or the file system, so the same sources and withdrawals always
give the same release, byte for byte.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from medrealmm.release.arrow import JSON_COLUMNS
from medrealmm.release.sources import ReleaseSources
from medrealmm.release.withdrawals import Withdrawal
from medrealmm.schema import Consultation, Event, ImageRef, Instance
from medrealmm.stats.dataset import dataset_statistics

FORMAT = 1
DATA_DIR = "data"
IMAGE_DIR = "images"
MANIFEST = "manifest.json"
SIGNATURE = "manifest.json.sig"  # release/signing.py: the builder's Ed25519 signature of it
DUA_FILE = "DUA.md"
CHANGELOG = "CHANGELOG.md"
CITATION = "CITATION.cff"
CARD = "README.md"
TABLES = ("consultations", "instances", "rubrics")
# Nested fields are Arrow lists and structs (``release.arrow``); the free-form mappings in
# ``JSON_COLUMNS`` stay JSON text, listed per table in the manifest for the loader.
_VERSION = re.compile(r"\d+\.\d+(\.\d+)?")
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def is_release_manifest(data: object) -> bool:
    """A release's manifest by its content, not its name: a corpus build writes a
    ``manifest.json`` too (into the builder's run folder), which has no format or checksums."""
    return isinstance(data, dict) and "format" in data and isinstance(data.get("files"), dict)


def check_version(version: str) -> str:
    if not _VERSION.fullmatch(version):
        raise ValueError(f"release version '{version}' is not of the form X.Y or X.Y.Z")
    return version


def version_key(version: str) -> tuple[int, ...]:
    """Release versions in numeric order (0.10 after 0.9)."""
    return tuple(int(part) for part in check_version(version).split("."))


def previous_version(shipped: Mapping[str, object], version: str) -> str | None:
    """The latest version before ``version`` among those shipped (None: the first)."""
    earlier = [v for v in shipped if version_key(v) < version_key(version)]
    return max(earlier, key=version_key, default=None)


def shipped_cases(sources: ReleaseSources) -> dict[str, list[str]]:
    """The ids a version shipped, kept in the run so the next version can say what it adds."""
    return {
        "consultations": sorted(c.id for c in sources.consultations),
        "instances": sorted(i.id for i in sources.instances),
    }


def canary(name: str) -> str:
    """A fixed string per dataset name: finding it in a model's output or corpus shows exposure."""
    return f"MEDREALMM CANARY GUID {uuid.uuid5(uuid.NAMESPACE_URL, f'medrealmm:{name}')}"


def without_withdrawn(sources: ReleaseSources, withdrawn: Iterable[str]) -> ReleaseSources:
    """Drop withdrawn cases with every instance and rubric cut from them."""
    gone = set(withdrawn)
    instances = [i for i in sources.instances if i.consultation_id not in gone]
    kept_instances = {i.id for i in instances}
    return replace(
        sources,
        consultations=[c for c in sources.consultations if c.id not in gone],
        instances=instances,
        rubrics=[r for r in sources.rubrics if r.instance_id in kept_instances],
    )


def case_folder(case_id: str) -> str:
    """Case ids become folder names only when they are plainly safe; else a hash stands in."""
    if _SAFE_ID.fullmatch(case_id) and case_id not in {".", ".."}:
        return case_id
    return "case-" + hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:16]


def released_image_path(case_id: str, source_path: str, sha256: str) -> str:
    """Named by content, never by the original file name, which may carry a patient's name."""
    suffix = PurePosixPath(source_path).suffix.lower()
    return f"{IMAGE_DIR}/{case_folder(case_id)}/{sha256[:16]}{suffix}"


def _rebase(events: list[Event], case_id: str, hashes: Mapping[str, str]) -> list[Event]:
    def moved(ref: ImageRef) -> ImageRef:
        sha = hashes[ref.path]
        return ref.model_copy(
            update={"path": released_image_path(case_id, ref.path, sha), "sha256": sha}
        )

    return [
        event.model_copy(update={"images": [moved(ref) for ref in event.images]})
        for event in events
    ]


def rebase_images(sources: ReleaseSources, hashes: Mapping[str, str]) -> ReleaseSources:
    """Point every image reference at its copy inside the release (``hashes``: path -> sha256)."""
    consultations = [
        c.model_copy(update={"events": _rebase(c.events, c.id, hashes)})
        for c in sources.consultations
    ]
    instances = [
        i.model_copy(update={"context": _rebase(i.context, i.consultation_id, hashes)})
        for i in sources.instances
    ]
    return replace(sources, consultations=consultations, instances=instances)


def _case_refs(
    consultations: Iterable[Consultation], instances: Iterable[Instance]
) -> Iterable[tuple[str, ImageRef]]:
    for c in consultations:
        yield from ((c.id, ref) for e in c.events for ref in e.images)
    for i in instances:
        yield from ((i.consultation_id, ref) for e in i.context for ref in e.images)


def image_paths(consultations: Iterable[Consultation], instances: Iterable[Instance]) -> set[str]:
    """Source paths of every image the shipped rows refer to; nothing else is copied."""
    return {ref.path for _, ref in _case_refs(consultations, instances)}


def recorded_hashes(
    consultations: Iterable[Consultation], instances: Iterable[Instance]
) -> dict[str, str]:
    """Source path -> the sha256 de-identification recorded for the masked image."""
    return {ref.path: ref.sha256 for _, ref in _case_refs(consultations, instances) if ref.sha256}


def image_moves(sources: ReleaseSources, hashes: Mapping[str, str]) -> dict[str, str]:
    """Released path -> source path, for every image the shipped rows refer to."""
    return {
        released_image_path(case_id, ref.path, hashes[ref.path]): ref.path
        for case_id, ref in _case_refs(sources.consultations, sources.instances)
    }


@dataclass(frozen=True)
class ReleaseInfo:
    """What the maintainers state about a release, beyond the data itself."""

    name: str
    version: str
    title: str
    authors: tuple[str, ...]
    contamination_disclosures: tuple[str, ...] = ()
    #: The dataset's own Data Use Agreement (markdown); none: the build is refused, since the
    #: bundled agreement is the demo's (``texts.demo_dua_text``), not a hospital's.
    dua: str | None = None


def departments(sources: ReleaseSources) -> dict[str, dict[str, int]]:
    cases = Counter(c.department for c in sources.consultations)
    instances = Counter(i.department for i in sources.instances)
    return {
        name: {"consultations": cases[name], "instances": instances[name]}
        for name in sorted(set(cases) | set(instances))
    }


def counts(sources: ReleaseSources, images: int, withdrawn: int) -> dict[str, int]:
    return {
        "consultations": len(sources.consultations),
        "instances": len(sources.instances),
        "rubrics": len(sources.rubrics),
        "images": images,
        "withdrawn_cases": withdrawn,
    }


def contamination(info: ReleaseInfo) -> dict[str, object]:
    return {
        "canary": canary(info.name),
        "publicly_available_before_release": False,
        "known_training_exposure": list(info.contamination_disclosures),
        "user_obligation": (
            "Users must disclose if any content of this release was included in model "
            "training data (DUA, citation and contamination clause)."
        ),
    }


def review_record(allow_unreviewed: bool, gaps: list[str]) -> dict[str, object]:
    """The manifest's ``review``: complete, or released anyway by an explicit flag."""
    return {"complete": not gaps, "allow_unreviewed": allow_unreviewed, "open": list(gaps)}


def manifest(
    info: ReleaseInfo,
    sources: ReleaseSources,
    *,
    images: int,
    withdrawn: int,
    dua_sha256: str,
    files: Mapping[str, str],
    review: Mapping[str, object] | None = None,
) -> dict[str, object]:
    return {
        "name": info.name,
        "title": info.title,
        "version": info.version,
        "format": FORMAT,
        "sources": {
            "corpus_stage": sources.corpus_stage,
            "corpus_review_approved": sources.corpus_review_approved,
            "rubric_stage": sources.rubric_stage,
            "rubrics_approved": sources.rubrics_approved,
        },
        "review": dict(review or review_record(False, sources.review_gaps())),
        "counts": counts(sources, images, withdrawn),
        "departments": departments(sources),
        "statistics": dataset_statistics(
            sources.instances, {r.instance_id: r for r in sources.rubrics}
        ),
        "tables": {
            table: {"file": f"{DATA_DIR}/{table}.parquet", "json_columns": list(columns)}
            for table, columns in JSON_COLUMNS.items()
        },
        "contamination": contamination(info),
        "dua": {"file": DUA_FILE, "sha256": dua_sha256},
        "files": dict(sorted(files.items())),
    }


def added_cases(sources: ReleaseSources, previous: Iterable[str]) -> list[str]:
    """Consultations this version ships that the previous one did not."""
    before = set(previous)
    return sorted(c.id for c in sources.consultations if c.id not in before)


def changelog_entries(withdrawals: Iterable[Withdrawal]) -> list[dict[str, str]]:
    """Case id and date only: the reason and anything about the requester stay private."""
    return [{"date": w.date.isoformat(), "case_id": w.case_id} for w in withdrawals]
