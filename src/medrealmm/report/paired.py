"""The paired-difference table: every two conditions of one release on the cases both scored.

Conditions are the overall table's rows (models, each with images on and off) under the
primary grader, and each other grader's scores of the same condition against the
primary's (same replies, another judge). See ``stats.paired`` for the interval and the test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any

from medrealmm.report.tables import SCALE, Table
from medrealmm.stats.bootstrap import DEFAULT_RESAMPLES
from medrealmm.stats.cases import CaseRecord, case_means, consultation_of
from medrealmm.stats.paired import PairedDifference, paired_difference
from medrealmm.stats.weighting import Weighting, weighted

COLUMNS = (
    *("model_a", "images_a", "grader_a", "model_b", "images_b", "grader_b"),
    *("cases", "consultations", "difference", "ci_low", "ci_high", "p_value"),
)
TEST = (
    "差值 = A − B，在两者都完整评分的同一批病例上取均值；95% CI 为按问诊整体重抽样的成对自助法；"
    "p 值为问诊层面的成对符号翻转置换检验（双侧）"
)


def compare_conditions(
    a: Sequence[CaseRecord],
    b: Sequence[CaseRecord],
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    weighting: Weighting = Weighting.CASE,
) -> PairedDifference | None:
    """A - B over the cases both scored in full (each case's mean over its samples; with
    ``consultation`` weighting each consultation's mean over those cases), resampling
    consultations; None when they share no case."""
    mine, theirs = case_means(a), case_means(b)
    shared = sorted(mine.keys() & theirs.keys())
    if not shared:
        return None
    consultation = consultation_of([*a, *b])
    labels = [consultation[case] for case in shared]
    first, units = weighted([mine[case] for case in shared], labels, weighting)
    second, _ = weighted([theirs[case] for case in shared], labels, weighting)
    found = paired_difference(first, second, units, seed=seed, resamples=resamples)
    return replace(found, cases=len(shared))


def paired_row(
    a: tuple[str, bool, str], b: tuple[str, bool, str], found: PairedDifference
) -> dict[str, Any]:
    return {
        "model_a": a[0],
        "images_a": a[1],
        "grader_a": a[2],
        "model_b": b[0],
        "images_b": b[1],
        "grader_b": b[2],
        "cases": found.cases,
        "consultations": found.consultations,
        "difference": round(found.difference * SCALE, 3),
        "ci_low": round(found.low * SCALE, 3),
        "ci_high": round(found.high * SCALE, 3),
        "p_value": round(found.p_value, 4),
    }


def paired_table(
    records: Sequence[CaseRecord],
    overall: Table,
    *,
    grader: str,
    others: Mapping[str, Sequence[CaseRecord]] = {},
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    weighting: Weighting = Weighting.CASE,
) -> Table:
    """Every two of ``overall``'s conditions (A the higher-ranked), then each other grader
    against ``grader`` on each condition both scored; ``others``: grader -> its records."""
    groups: dict[tuple[str, bool], list[CaseRecord]] = {}
    for record in records:
        groups.setdefault(record.condition, []).append(record)
    ranked = [
        (r["model"], r["images"]) for r in overall.rows if (r["model"], r["images"]) in groups
    ]
    rows = []
    for first, second in combinations(ranked, 2):
        found = compare_conditions(
            groups[first], groups[second], seed=seed, resamples=resamples, weighting=weighting
        )
        if found is not None:
            rows.append(paired_row((*first, grader), (*second, grader), found))
    for name, theirs in sorted(others.items()):
        by_condition: dict[tuple[str, bool], list[CaseRecord]] = {}
        for record in theirs:
            by_condition.setdefault(record.condition, []).append(record)
        for condition in ranked:
            if condition not in by_condition:
                continue
            found = compare_conditions(
                groups[condition],
                by_condition[condition],
                seed=seed,
                resamples=resamples,
                weighting=weighting,
            )
            if found is not None:
                rows.append(paired_row((*condition, grader), (*condition, name), found))
    return Table(
        "paired_differences",
        "成对比较（Paired differences）：同一版本上两两条件（模型、有图 / 无图、评分器）"
        f"的得分差；{TEST}；{Weighting(weighting).note}",
        COLUMNS,
        rows,
    )
