"""The demo run's last step: a release of whatever de-identified work the run produced."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from medrealmm.release.build import release_store
from medrealmm.release.layout import ReleaseInfo
from medrealmm.release.sources import (
    RELEASABLE_CORPUS,
    UnmaskedDataError,
    UnreviewedReleaseError,
)
from medrealmm.release.texts import demo_dua_text, read_dua
from medrealmm.release.withdrawals import default_register
from medrealmm.store import RunStore, stages

DEMO_INFO = ReleaseInfo(
    name="medrealmm-demo",
    version="0.1",
    title="MedRealMM demo release (synthetic corpus)",
    authors=("medrealmm demo",),
    dua=demo_dua_text(),
)


def run_dua(store: RunStore, given: Path | None) -> str | None:
    """The DUA a run's release carries: the builder's file, else the demo's agreement on the
    demo's own run (``stages.DEMO_META``), else none (the release is refused)."""
    if given is not None:
        return read_dua(given)
    return demo_dua_text() if store.get_meta(stages.DEMO_META) else None


def release_demo(
    store: RunStore,
    out: Path,
    *,
    allow_unreviewed: bool = False,
    version: str = DEMO_INFO.version,
    folder: str = "release",
    dua: Path | None = None,
) -> str:
    """A summary line; a refusal is reported, not raised, so the rest of the demo stands.
    Without ``allow_unreviewed`` a release waits for review (the demo's is simulated, so the
    demo allows it). ``version`` and ``folder``: the demo's next version (0.2) beside 0.1."""
    if not any(store.count(stage) for stage in RELEASABLE_CORPUS):
        return "release: skipped (no de-identified corpus in this run)"
    try:
        text = run_dua(store, dua)
    except (FileNotFoundError, ValueError) as exc:
        return f"release: refused: {exc}"
    if text is None:
        return (
            "release: refused: give the dataset's own Data Use Agreement (release: {dua: FILE} "
            "in the pipeline YAML, or `medrealmm release build --dua FILE`)"
        )
    try:
        result = release_store(
            store,
            out / folder,
            replace(DEMO_INFO, version=version, dua=text),
            register=default_register(out),
            allow_unreviewed=allow_unreviewed,
        )
    except (UnmaskedDataError, UnreviewedReleaseError) as exc:
        return f"release: refused: {exc}"
    counts = result.manifest["counts"]
    unreviewed = "" if result.manifest["review"]["complete"] else " (not review-approved)"
    since = result.manifest.get("previous_version")
    change = (
        f" ({len(result.added)} added since {since}, {counts['withdrawn_cases']} withdrawn)"
        if since
        else ""
    )
    return (
        f"release {version}: {counts['consultations']} consultations, "
        f"{counts['instances']} instances, {counts['images']} images{change} -> "
        f"{result.out}{unreviewed}"
    )
