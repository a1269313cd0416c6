"""The grader's own tables: "cannot assess" counts per grader and model, and a judge panel's
members (calls, tokens) and agreement (Krippendorff's alpha beside each pair's AC1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from medrealmm.report.tables import Table, condition_label
from medrealmm.store import RunStore

if TYPE_CHECKING:
    from medrealmm.evaluate.results import Results


def grader_tables(store: RunStore, results: Results) -> list[Table]:
    """Abstentions per grader and model whenever anything was graded (a count of 0 says the
    graders could always tell); the panel tables when the report's grader is a panel."""
    from medrealmm.evaluate.results import abstentions_by_grader, panel_summary

    tables = []
    counts = abstentions_by_grader(store)
    if counts:
        rows = [
            {
                "grader": row.grader,
                "condition": condition_label(row.model, row.images),
                "cases": row.cases,
                "cases_with_abstentions": row.cases_with_abstentions,
                "abstained": row.abstained,
            }
            for row in counts
        ]
        columns = ("grader", "condition", "cases", "cases_with_abstentions", "abstained")
        tables.append(Table("abstentions", "评分器无法评估的准则（按评分器与模型）", columns, rows))
    panel = panel_summary(store, results)
    if panel is not None:
        members = [
            {
                "grader": m.grader,
                "weight": m.weight,
                "calls": m.calls,
                "cached_calls": m.cached_calls,
                "prompt_tokens": m.prompt_tokens,
                "completion_tokens": m.completion_tokens,
            }
            for m in panel.members
        ]
        title = f"评审团 {panel.name}（{panel.method}）：各评分器的调用与 token"
        tables.append(Table("panel_members", title, tuple(members[0]), members))
        agreement = [
            {
                "criteria": row.subset,
                "items": row.items,
                "alpha": None if row.alpha is None else round(row.alpha, 3),
                "rater_a": a,
                "rater_b": b,
                "n": n,
                "ac1": None if ac1 is None else round(ac1, 3),
            }
            for row in panel.agreement
            for a, b, n, ac1 in row.pairs
        ]
        columns = ("criteria", "items", "alpha", "rater_a", "rater_b", "n", "ac1")
        title = "评审团一致性：LLM 准则判定的 Krippendorff α（全体）与两两 AC1"
        tables.append(Table("panel_agreement", title, columns, agreement))
    return tables
