"""The living benchmark in the report: the two latest release versions built from this run,
each model's Score on the cases both share beside its Score on each version's own cases."""

from __future__ import annotations

from collections.abc import Sequence

from medrealmm.evaluate.versions import VersionComparison, compare_versions
from medrealmm.release.layout import version_key
from medrealmm.report.i18n import Lang
from medrealmm.report.tables import Table, _by_condition, _scaled, headline_conditions
from medrealmm.stats.cases import CaseRecord, case_means
from medrealmm.store import RunStore, stages

TITLE = "版本比较（living benchmark）"


def builder_versions(store: RunStore) -> VersionComparison | None:
    """The two latest versions this run released (``release.versions``), else None."""
    shipped = store.get_meta(stages.RELEASE_VERSIONS_META) or {}
    latest = sorted(shipped, key=version_key)[-2:]
    if len(latest) < 2:
        return None
    return compare_versions({v: shipped[v]["instances"] for v in latest})


def _mean(by_case: dict[str, float], cases: frozenset[str]) -> tuple[int, float | None]:
    values = [value for case, value in by_case.items() if case in cases]
    return len(values), _scaled(sum(values) / len(values)) if values else None


def versions_table(
    records: Sequence[CaseRecord],
    versions: VersionComparison,
    overall: Table,
    *,
    lang: Lang = "zh",
) -> Table:
    """Per headline condition: Score on the shared cases (the comparison), and on each
    version's whole case set (which C changes)."""
    headline = set(headline_conditions(records))
    groups = _by_condition(records)
    older = versions.shared | versions.withdrawn
    newer = versions.shared | versions.added
    rows = []
    for row in overall.rows:
        condition = (row["model"], row["images"])
        if condition not in headline:
            continue
        by_case = case_means(groups[condition])
        shared_n, shared_mean = _mean(by_case, versions.shared)
        older_n, older_mean = _mean(by_case, older)
        newer_n, newer_mean = _mean(by_case, newer)
        rows.append(
            {
                "label": row["label"],
                "model": condition[0],
                "images": condition[1],
                "cases_shared": shared_n,
                "mean_shared": shared_mean,
                "cases_older": older_n,
                "mean_older": older_mean,
                "cases_newer": newer_n,
                "mean_newer": newer_mean,
            }
        )
    return Table(
        "versions",
        f"{TITLE}：{versions.older} → {versions.newer}；{versions.note_zh()}"
        if lang == "zh"
        else f"Release versions {versions.older} → {versions.newer}: {versions.note()}",
        (
            *("label", "model", "images", "cases_shared", "mean_shared"),
            *("cases_older", "mean_older", "cases_newer", "mean_newer"),
        ),
        rows,
    )
