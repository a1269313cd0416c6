"""What a researcher reads first: the leaderboard, then a table of contents; sortable tables;
a page per case; one language per page (``--lang zh|en``)."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from medrealmm.report import ReportResult, write_report
from medrealmm.report.case_pages import page_name
from medrealmm.report.html import SECTIONS
from medrealmm.report.i18n import has_cjk
from medrealmm.report.tables import condition_label
from medrealmm.rubric.rounds import evaluation_rubrics
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import ResponseKey, VerdictKey

#: three Latin words in a row: an English phrase, not a model name or an id
_LATIN_PHRASE = re.compile(r"[A-Za-z]{2,}(?:[ ,;:]+[A-Za-z]{2,}){2,}")


class _Page(HTMLParser):
    """The texts of a page's headings, table headers, table cells and captions."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.texts: dict[str, list[str]] = {}
        self.ids: list[str] = []
        self.links: list[str] = []
        self.scripts: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "h2" and found.get("id"):
            self.ids.append(str(found["id"]))
        if tag == "a" and found.get("href"):
            self.links.append(str(found["href"]))
        if tag == "script":
            self.scripts.append(found)
        if tag in ("h1", "h2", "th", "td", "summary", "figcaption", "title"):
            self.open.append(tag)
            self.texts.setdefault(tag, []).append("")

    def handle_endtag(self, tag: str) -> None:
        if self.open and self.open[-1] == tag:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        if self.open:
            self.texts[self.open[-1]][-1] += data


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def english(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    with RunStore(synthetic_store) as store:
        return write_report(store, tmp_path_factory.mktemp("en"), resamples=200, lang="en")


def test_the_leaderboard_comes_first_then_the_contents(built_report: ReportResult) -> None:
    html = built_report.html.read_text(encoding="utf-8")
    headings = _parse(built_report.html).texts["h2"]
    assert headings[0] == SECTIONS[0][0] == "总体结果（论文 4.2）"
    leaderboard, contents = html.index("总体结果（论文 4.2）"), html.index('class="toc"')
    assert leaderboard < contents < html.index(headings[1])


def test_the_contents_link_every_section_and_the_case_pages(built_report: ReportResult) -> None:
    page = _parse(built_report.html)
    assert len(page.ids) == len(page.texts["h2"]) > 5
    assert {f"#{anchor}" for anchor in page.ids} <= set(page.links)
    assert "cases/index.html" in page.links
    assert (built_report.html.parent / "cases" / "index.html").is_file()


def test_every_table_sorts_with_one_inline_script_and_nothing_external(
    built_report: ReportResult,
) -> None:
    html = built_report.html.read_text(encoding="utf-8")
    tables = html.count("<table")
    assert tables > 10 and html.count('<table class="sortable">') == tables
    page = _parse(built_report.html)
    assert len(page.scripts) == 1 and "src" not in page.scripts[0]
    assert 'querySelectorAll("table.sortable")' in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert not re.search(r"https?://", html.split("<script>", 1)[1])  # the script fetches nothing


def test_the_mccp_validation_shows_only_with_decisions(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run") as store:
        result = write_report(store, tmp_path / "out")
    html = result.html.read_text(encoding="utf-8")
    assert "总体结果（论文 4.2）" in html  # the leaderboard says it is empty
    assert "MCCP 医生验证" not in html


def test_the_mccp_validation_shows_once_physicians_decide(
    synthetic_store: Path, tmp_path: Path
) -> None:
    from medrealmm.mccp.validation import draw_validation_sample, record_decision

    copy = tmp_path / "run"
    copy.mkdir()
    shutil.copy(synthetic_store, copy / synthetic_store.name)
    with RunStore(copy / synthetic_store.name) as store:
        first = draw_validation_sample(store, 2)[0]
        record_decision(store, first, "dr-example", accept=True)
        result = write_report(store, tmp_path / "out", resamples=20, case_pages=False)
    html = result.html.read_text(encoding="utf-8")
    assert "MCCP 医生验证（论文 6.3）" in html
    assert "cases/index.html" not in html and not (tmp_path / "out" / "cases").exists()


def test_a_case_page_shows_each_models_verdicts_on_the_rubric(
    built_report: ReportResult, synthetic_store: Path
) -> None:
    folder = built_report.html.parent / "cases"
    with RunStore(synthetic_store) as store:
        grader = built_report.primary_grader
        rubrics = evaluation_rubrics(store)
        raw = store.raw_rows(stages.EVAL_VERDICT, f"{grader}|")
    instance_id = sorted(rubrics)[0]
    page = _parse(folder / page_name(instance_id))
    cells = page.texts["td"]
    for criterion in rubrics[instance_id].criteria:
        assert criterion.text in cells
    # one verdict read back from the store is the mark in its row and column
    for key, payload in sorted(raw.items()):
        found = VerdictKey.parse(key)
        model, images, case, sample = ResponseKey.split(found.response)
        if case == instance_id and sample == 0 and json.loads(payload)["status"] == "ok":
            break
    else:
        pytest.fail("no verdict on the first case")
    verdict = json.loads(payload)
    text = next(c.text for c in rubrics[instance_id].criteria if c.id == found.criterion_id)
    column = page.texts["th"].index(condition_label(model, images))
    assert cells[cells.index(text) + column] == ("✓" if verdict["value"] else "✗")
    index = _parse(folder / "index.html")
    assert page_name(instance_id) in index.links and "../index.html" in index.links


def test_the_english_page_holds_no_chinese_outside_data(english: ReportResult) -> None:
    page = _parse(english.html)
    assert '<html lang="en">' in english.html.read_text(encoding="utf-8")
    for tag in ("h1", "h2", "th", "summary", "figcaption", "title"):
        chinese = [t for t in page.texts[tag] if has_cjk(t)]
        assert chinese == [], (tag, chinese)
    # model names are data: the synthetic run's are Chinese
    overall = json.loads((english.html.parent / "tables" / "overall.json").read_text("utf-8"))
    models = {row["model"] for row in overall["rows"]}
    cases = _parse(english.html.parent / "cases" / "index.html")
    headers = [_without(t, models) for t in cases.texts["th"]]
    assert headers and [t for t in headers if has_cjk(t)] == []


def _without(text: str, names: set[str]) -> str:
    for name in names:
        text = text.replace(name, "")
    return text


def test_the_chinese_page_has_no_english_sentences_in_its_tables(
    built_report: ReportResult,
) -> None:
    page = _parse(built_report.html)
    phrases = [c for c in page.texts["td"] if _LATIN_PHRASE.search(c)]
    assert phrases == []
    assert '<html lang="zh-CN">' in built_report.html.read_text(encoding="utf-8")
    assert "MedRealMM 评测报告" in page.texts["h1"]
    case = _parse(next((built_report.html.parent / "cases").glob("case-*.html")))
    assert [c for c in case.texts["td"] if _LATIN_PHRASE.search(c)] == []
