"""Per-case pages beside the report: for each case its rubric, and for every model which
criteria it met or missed (sample 0, the headline grader), with the case score.

A researcher reads a surprising number back to the cases behind it. ``cases/index.html``
lists every case with each model's score (sortable), ``cases/<case>.html`` shows one. The
pages read offline like the report (inline style and sorting script, nothing fetched); the
Chinese glyphs they show come from one font subset beside them, ``cases/cjk.css``, cut once for
all of them, so a reader without a CJK font sees text, not boxes."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from html import escape
from pathlib import Path

from medrealmm.report import i18n
from medrealmm.report.html import SORT_SCRIPT
from medrealmm.report.tables import condition_label
from medrealmm.report.webfont import font_face_css
from medrealmm.rubric.rounds import evaluation_rubrics
from medrealmm.schema import Rubric
from medrealmm.stats.cases import CaseRecord
from medrealmm.stats.strata import STRATA
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import ResponseKey, VerdictKey

CASES_DIR = "cases"
CASES_INDEX = f"{CASES_DIR}/index.html"
_UNSAFE = re.compile(r"[^\w.-]")

FONT_CSS = "cjk.css"
_STYLE = """
body { font-family: "MedRealMM CJK", "Noto Sans CJK SC", "PingFang SC", sans-serif;
  margin: 2rem auto; max-width: 1100px; padding: 0 1rem; color: #222; line-height: 1.5; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .85rem; }
th, td { border: 1px solid #ccc; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f3f6f9; cursor: pointer; }
td.num, td.v { text-align: center; font-variant-numeric: tabular-nums; }
.met { color: #1e7b34; } .miss { color: #b03a2e; } .odd { color: #946200; }
.note { background: #fff8e1; border: 1px solid #f0d58c; padding: .5rem 1rem; }
th[aria-sort="ascending"]::after { content: " ▲"; }
th[aria-sort="descending"]::after { content: " ▼"; }
"""

Condition = tuple[str, bool]
#: (mark, css class) for a verdict: met, not met, cannot assess, failed, none
_MARKS = {"met": ("✓", "met"), "not_met": ("✗", "miss"), "abstained": ("?", "odd")}


def page_name(instance_id: str) -> str:
    """A file name for a case id: ids are the store's keys, not file names."""
    return _UNSAFE.sub("_", instance_id) + ".html"


def write_case_pages(
    stores: Sequence[RunStore],
    records: Sequence[CaseRecord],
    grader: str | None,
    out: Path,
    *,
    lang: i18n.Lang = "zh",
) -> list[Path]:
    """``records``: the headline (sample-0) records the report scored; ``stores``: the runs
    they came from (the report's run first). Returns the pages written, index first."""
    if grader is None or not records:
        return []
    folder = out / CASES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    rubrics: dict[str, Rubric] = {}
    verdicts: dict[tuple[str, Condition], dict[str, str]] = defaultdict(dict)
    for store in reversed(stores):  # the report's own run wins where two hold a case
        rubrics.update(evaluation_rubrics(store))
        # two fields of each verdict, read in SQL: no row is parsed in Python
        rows = store.fields_under(stages.EVAL_VERDICT, [f"{grader}|"], ("status", "value"))
        for key, status, value in rows:
            found = VerdictKey.parse(key)
            model, images, instance_id, sample = ResponseKey.split(found.response)
            if sample == 0:
                verdicts[(instance_id, (model, images))][found.criterion_id] = _status(
                    status, value
                )
    by_case: dict[str, dict[Condition, CaseRecord]] = defaultdict(dict)
    for record in records:
        by_case[record.instance_id][record.condition] = record
    conditions = sorted({r.condition for r in records})
    labels = {c: i18n.cell_text(condition_label(*c), lang) for c in conditions}
    t = i18n.PAGE[lang]
    pages = [folder / "index.html"]
    texts: list[str] = []
    rows = []
    for instance_id in sorted(by_case):
        cases = by_case[instance_id]
        first = next(iter(cases.values()))
        link = f'<a href="{escape(page_name(instance_id))}">{escape(instance_id)}</a>'
        scores = [_score(cases.get(c)) for c in conditions]
        rows.append([link, *(escape(v) for v in _facts(first, lang)), *scores])
        page = _case_page(
            instance_id, cases, conditions, labels, rubrics.get(instance_id), verdicts, lang
        )
        path = folder / page_name(instance_id)
        path.write_text(page, encoding="utf-8")
        pages.append(path)
        texts.append(page)
    header = [t["case"], t["department"], t["intent"], t["stage"], *labels.values()]
    body = _table(header, rows, numeric_from=4)
    back = f'<p><a href="../index.html">{escape(t["back"])}</a></p>'
    index = _page(t["cases_title"], f"{back}<p>{escape(t['legend'])}</p>{body}", lang)
    pages[0].write_text(index, encoding="utf-8")
    glyphs = "".join(sorted({c for text in [*texts, index] for c in text}))
    (folder / FONT_CSS).write_text(font_face_css(glyphs), encoding="utf-8")
    return pages


def _facts(record: CaseRecord, lang: i18n.Lang) -> tuple[str, str, str]:
    """Department, intent and stage: the taxonomies' Chinese names on a Chinese page, their
    ids on an English one (the taxonomies name them in Chinese only)."""
    if lang == "zh":
        return (
            record.department,
            STRATA["intent"].key(record)[1],
            STRATA["stage"].key(record)[1],
        )
    return record.department, record.intent, record.stage


def _status(status: str | None, value: int | None) -> str:
    """A verdict's mark from its stored ``status`` and ``value`` (SQLite's 0/1)."""
    if status == "abstained":
        return "abstained"
    if status == "failed" or value is None:
        return "failed"
    return "met" if value else "not_met"


def _score(record: CaseRecord | None) -> str:
    if record is None or record.score is None:
        return "—"
    return f"{record.score * 100:.1f}"


def _case_page(
    instance_id: str,
    cases: dict[Condition, CaseRecord],
    conditions: list[Condition],
    labels: dict[Condition, str],
    rubric: Rubric | None,
    verdicts: dict[tuple[str, Condition], dict[str, str]],
    lang: i18n.Lang,
) -> str:
    t = i18n.PAGE[lang]
    shown = [c for c in conditions if c in cases]
    first = cases[shown[0]]
    named = zip((t["department"], t["intent"], t["stage"]), _facts(first, lang), strict=True)
    colon = ": " if lang == "en" else "："
    facts = (
        "<p>"
        + " · ".join(f"{escape(k)}{colon}{escape(v)}" for k, v in named)
        + ("" if first.rubric_approved else f" · {escape(t['rubric_unapproved'])}")
        + "</p>"
    )
    header = [t["criterion"], t["weight"], t["kind"], *(labels[c] for c in shown)]
    rows = []
    for criterion in rubric.criteria if rubric else []:
        kind = t["rule"] if criterion.kind == "rule" else "LLM"
        marks = []
        for condition in shown:
            status = verdicts.get((instance_id, condition), {}).get(criterion.id)
            marks.append(_mark(status, t, negative=criterion.weight < 0))
        rows.append([escape(criterion.text), str(criterion.weight), kind, *marks])
    score_row = [f"<b>{escape(t['score'])}</b>", "", "", *(_score(cases[c]) for c in shown)]
    body = _table(header, [*rows, score_row], numeric_from=1)
    nav = (
        f'<p><a href="index.html">{escape(t["all_cases"])}</a> · '
        f'<a href="../index.html">{escape(t["back"])}</a></p>'
    )
    legend = f"<p class=note>{escape(t['legend'])}</p>"
    return _page(f"{t['case']} {instance_id}", nav + facts + legend + body, lang)


def _mark(status: str | None, t: dict[str, str], *, negative: bool) -> str:
    """✓ / ✗ as the grader said; green where it helps the score, red where it costs."""
    if status is None:
        return f'<span title="{escape(t["missing"])}">—</span>'
    mark, css = _MARKS.get(status, ("!", "odd"))
    if negative and css in ("met", "miss"):
        css = "miss" if css == "met" else "met"
    return f'<span class="{css}" title="{escape(t[status])}">{mark}</span>'


def _table(header: list[str], rows: list[list[str]], *, numeric_from: int) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    lines = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{v}</td>' if i >= numeric_from else f"<td>{v}</td>"
            for i, v in enumerate(row)
        )
        lines.append(f"<tr>{cells}</tr>")
    return (
        f'<table class="sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(lines)}</tbody></table>"
    )


def _page(title: str, body: str, lang: i18n.Lang) -> str:
    html_lang = i18n.PAGE[lang]["html_lang"]
    return (
        f'<!DOCTYPE html>\n<html lang="{html_lang}">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n"
        f'<link rel="stylesheet" href="{FONT_CSS}">\n<style>{_STYLE}</style>\n</head>\n<body>\n'
        f"<h1>{escape(title)}</h1>\n{body}\n<script>{SORT_SCRIPT}</script>\n</body>\n</html>\n"
    )
