"""Write the report folder: index.html, figures/*.png and tables/*.csv|json."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from medrealmm.llm import OFFLINE_NAME
from medrealmm.report import i18n
from medrealmm.report.axes import axis_table
from medrealmm.report.case_pages import CASES_INDEX, write_case_pages
from medrealmm.report.dataset_tables import acceptance_table, dataset_tables, usage_table
from medrealmm.report.figures import render_figures
from medrealmm.report.grader_tables import grader_tables
from medrealmm.report.html import render_html
from medrealmm.report.latency import latency_table
from medrealmm.report.models_table import models_table
from medrealmm.report.paired import paired_table
from medrealmm.report.tables import Table, build_tables, condition_label, meta_eval_tables
from medrealmm.report.versions import TITLE as VERSIONS_TITLE
from medrealmm.report.versions import builder_versions, versions_table
from medrealmm.stats.bootstrap import DEFAULT_RESAMPLES
from medrealmm.stats.cases import (
    CaseRecord,
    load_scored_cases,
    withdrawn_consultations,
    withdrawn_instances,
)
from medrealmm.stats.raters import load_raters
from medrealmm.stats.weighting import Weighting
from medrealmm.store import RunStore, stages
from medrealmm.store.runstore import gc_paused

REPORT_FILE = "index.html"


@dataclass(frozen=True)
class ReportResult:
    html: Path
    figures: list[Path]
    tables: list[Path]
    primary_grader: str | None
    scored: int
    incomplete: int
    stale: dict[tuple[str, bool], int] = field(default_factory=dict)  # left out, by condition
    case_pages: list[Path] = field(default_factory=list)  # cases/index.html first


def write_table(table: Table, folder: Path) -> list[Path]:
    csv_path = folder / f"{table.name}.csv"
    with csv_path.open("w", encoding="utf-8-sig", newline="") as handle:  # BOM: Excel reads CJK
        writer = csv.DictWriter(handle, fieldnames=list(table.columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(table.rows)
    json_path = folder / f"{table.name}.json"
    json_path.write_text(
        json.dumps(
            {
                "name": table.name,
                "title": table.title,
                "columns": table.columns,
                "rows": table.rows,
            },
            ensure_ascii=False,
            indent=1,
        ),
        encoding="utf-8",
    )
    return [csv_path, json_path]


def _current(store: RunStore) -> list[CaseRecord]:
    """Every grader's scores against the rubrics that apply now (the paired table's
    comparison of graders reads the same records the primary's rows come from)."""
    return [r for r in load_scored_cases(store) if not r.stale]


def write_report(
    store: RunStore,
    out: Path | str,
    *,
    grader: str | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    others: Sequence[RunStore] = (),
    lang: i18n.Lang = "zh",
    case_pages: bool = True,
    weighting: Weighting = Weighting.CASE,
) -> ReportResult:
    """Analyse the primary grader's scores (``grader``, else store meta, else the busiest),
    read through the results layer ``eval score`` uses; stale scores are listed, not used.
    ``others``: more runs of the same benchmark, for one leaderboard across all their models
    (judge agreement still comes from ``store`` alone). ``lang``: the page's language; the
    CSV/JSON tables are the same in both. ``case_pages``: write ``cases/`` (a file per case; off
    for very large runs)."""
    from medrealmm.evaluate import K_DEFINITIONS, K_DEFINITIONS_ZH
    from medrealmm.evaluate.meta_eval import load_meta_inputs
    from medrealmm.evaluate.results import load_leaderboard
    from medrealmm.stats.meta_eval import meta_evaluate

    out = Path(out)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    # the rows are read and counted with cyclic collection paused (``gc_paused``): they hold
    # no cycles; the figures, whose objects do, are drawn after it resumes
    with gc_paused():
        with store.sharing():  # the readers share rubrics, strata, scores and panel verdicts
            results = load_leaderboard([store, *others], grader)
            primary = results.grader
            mine = results.headline
            tables = build_tables(
                mine,
                load_raters(store, table2=True),
                seed=seed,
                resamples=resamples,
                summaries=results.summary(),
                imported=results.imported(),
                weighting=weighting,
            )
            everything = _current(store)
            judges = {
                name: [r for r in everything if r.grader == name and r.sample == 0]
                for name in results.graders
                if name != primary
            }
            acceptance = acceptance_table(store)
            extra = [
                axis_table(store, mine, tables["overall"], grader=primary, weighting=weighting),
                paired_table(
                    mine,
                    tables["overall"],
                    grader=primary,
                    others=judges,
                    seed=seed,
                    resamples=resamples,
                    weighting=weighting,
                ),
                *dataset_tables(store),
                acceptance,
                *grader_tables(store, results),
            ]
            gone = withdrawn_consultations(store)
            if gone:  # every table below is read without them (stats.cases)
                overall = tables["overall"]
                note = (
                    f"{overall.title}；已撤回 {len(gone)} 个问诊（{len(withdrawn_instances(store))}"
                    " 个实例），已从本报告所有表中排除"
                )
                tables["overall"] = replace(overall, title=note)
            # runs of two release versions: their shared cases only
            if results.versions is not None:
                overall = tables["overall"]
                if lang == "en":
                    title = f"{i18n.TITLE_EN['overall']}; {results.versions.note()}"
                else:
                    title = f"{overall.title}；{VERSIONS_TITLE}：{results.versions.note_zh()}"
                tables["overall"] = replace(overall, title=title)
            elif (released := builder_versions(store)) is not None:
                extra.append(versions_table(mine, released, tables["overall"], lang=lang))
            latency = latency_table(store, tables["overall"])
            if latency.rows:  # only replies generated here carry a measurement
                extra.append(latency)
            models = models_table(results)
            if models.rows:  # results written before evaluations kept their specs have none
                extra.append(models)
            inputs = load_meta_inputs(store)
        # what they shared is let go before the meta-evaluation's bootstrap, the largest step
        meta_rows = (
            meta_evaluate(
                inputs.graders, inputs.physicians, inputs.info, seed=seed, resamples=resamples
            )
            if inputs.physicians
            else []
        )
        del inputs
        if meta_rows:
            simulated = bool(store.get_meta(stages.PANEL_SIMULATED_META))
            extra += meta_eval_tables(meta_rows, simulated=simulated)
    usage = usage_table(store)
    if usage.rows:  # a run whose calls were all made elsewhere has nothing to show
        extra.append(usage)
    tables.update({t.name: t for t in extra})
    figures = render_figures(tables, lang)
    figure_paths = []
    for figure in figures:
        path = out / "figures" / f"{figure.name}.png"
        path.write_bytes(figure.png)
        figure_paths.append(path)
    table_paths = [p for table in tables.values() for p in write_table(table, out / "tables")]
    incomplete = sum(r.score is None for r in mine)
    stale = results.stale_by_condition()
    pages = write_case_pages([store, *others], mine, primary, out, lang=lang) if case_pages else []
    # the MCCP validation is shown once physicians have a sample to judge (its CSV always)
    judged = any(acceptance.rows[0][k] for k in ("sample", "decided", "outside_sample"))
    html = render_html(
        tables if judged else {n: t for n, t in tables.items() if n != acceptance.name},
        figures,
        lang=lang,
        case_index=CASES_INDEX if pages else None,
        k_definitions_en=K_DEFINITIONS,
        primary=primary,
        primary_is_baseline=primary == OFFLINE_NAME,
        instances=len({r.instance_id for r in mine}),
        scored=len(mine),
        incomplete=incomplete,
        seed=seed,
        resamples=resamples,
        stale=[
            {"label": i18n.cell_text(condition_label(model, images), lang), "scores": count}
            for (model, images), count in stale.items()
        ],
        k_definitions=K_DEFINITIONS_ZH,
    )
    html_path = out / REPORT_FILE
    html_path.write_text(html, encoding="utf-8")
    return ReportResult(
        html_path, figure_paths, table_paths, primary, len(mine), incomplete, stale, pages
    )
