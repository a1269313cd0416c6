from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.report import ReportResult, write_report
from medrealmm.report.figures import cjk_family
from medrealmm.store import RunStore

FIGURES = {
    "fig3_dataset",
    "fig4a_overall",
    "fig4b_decomposition",
    "fig5_images",
    "fig6a_department",
    "fig6b_intent_stage",
    "fig7_histogram",
    "fig11_images_turns",
    "fig12_subspecialty",
}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_every_figure_is_a_real_png(built_report: ReportResult) -> None:
    assert {p.stem for p in built_report.figures} == FIGURES
    for path in built_report.figures:
        data = path.read_bytes()
        assert data.startswith(PNG_MAGIC)
        assert len(data) > 10_000, path.name


def test_html_is_self_contained(built_report: ReportResult) -> None:
    html = built_report.html.read_text(encoding="utf-8")
    assert html.count('src="data:image/png;base64,') == len(FIGURES)
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing from the network
    # one inline script (table sorting), nothing loaded from elsewhere
    assert html.count("<script") == 1 and not re.search(r"<script[^>]*\bsrc=", html)
    assert "Gwet AC1" in html and "医生小组" in html and "离线基线" in html
    assert "未完成 1 条" in html


def test_every_table_has_csv_and_json(built_report: ReportResult) -> None:
    stems = {p.stem for p in built_report.tables}
    # + meta-eval x2, Fig 3 counts, by_position, abstentions
    assert len(built_report.tables) == 2 * len(stems) == 2 * 26  # + paired_differences, by_axis
    folder = built_report.tables[0].parent
    for stem in stems:
        with (folder / f"{stem}.csv").open(encoding="utf-8-sig") as handle:
            csv_rows = list(csv.DictReader(handle))
        payload = json.loads((folder / f"{stem}.json").read_text(encoding="utf-8"))
        assert len(csv_rows) == len(payload["rows"]) > 0, stem
        assert list(csv_rows[0]) == payload["columns"]


def test_chinese_glyphs_render_without_fallback(
    report_and_warnings: tuple[ReportResult, list[str]],
) -> None:
    assert cjk_family()
    assert [w for w in report_and_warnings[1] if "missing from font" in w] == []


def test_empty_run_still_writes_a_page(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run") as store:
        result = write_report(store, tmp_path / "out")
    assert result.figures == [] and result.scored == 0
    assert "没有可用的评分记录" in result.html.read_text(encoding="utf-8")


@pytest.mark.slow
def test_cli_report(synthetic_store: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(
        app, ["report", str(synthetic_store.parent), str(tmp_path / "r"), "--resamples", "200"]
    )
    assert ok.exit_code == 0, ok.output
    assert (tmp_path / "r" / "index.html").is_file()
    assert len(list((tmp_path / "r" / "figures").glob("*.png"))) == len(FIGURES)
    missing = runner.invoke(app, ["report", str(tmp_path / "nowhere"), str(tmp_path / "r2")])
    assert missing.exit_code == 2
    assert "no run store" in missing.output
    assert not (tmp_path / "nowhere").exists()  # reading never creates a store
    wrong = runner.invoke(
        app, ["report", str(synthetic_store), str(tmp_path / "r3"), "--grader", "nobody"]
    )
    assert wrong.exit_code == 2 and "scored nothing" in wrong.output


def test_report_help_explains_itself() -> None:
    result = CliRunner().invoke(app, ["report", "--help"])
    assert result.exit_code == 0 and "Gwet AC1" in result.output


def test_report_carries_dataset_statistics_and_mccp_acceptance(
    built_report: ReportResult,
) -> None:
    html = built_report.html.read_text(encoding="utf-8")
    assert "数据集统计（论文 3.5、图 3）" in html
    # no physician has a validation sample in this run: the table is written, not shown
    assert "MCCP 医生验证（论文 6.3）" not in html
    assert "用药指导" in html  # intents by their Chinese names
    folder = built_report.tables[0].parent
    overview = json.loads((folder / "dataset_overview.json").read_text(encoding="utf-8"))
    quantities = {row["quantity"] for row in overview["rows"]}
    assert {"turns", "images", "criteria", "positive", "negative"} <= quantities
    acceptance = json.loads((folder / "mccp_acceptance.json").read_text(encoding="utf-8"))
    assert set(acceptance["columns"]) >= {"sample", "accepted", "rate", "disagreements"}


def test_heat_maps_group_departments_and_show_n_per_cell(built_report: ReportResult) -> None:
    folder = built_report.tables[0].parent
    groups = json.loads((folder / "by_specialty_group.json").read_text(encoding="utf-8"))
    assert {row["stratum"] for row in groups["rows"]} <= {"内科", "皮肤性病科", "中医科"}
    assert all(row["cases"] >= 1 for row in groups["rows"])
    from medrealmm.report.figures import heatmap_figure
    from medrealmm.report.tables import Table

    table = Table("t", "t", tuple(groups["columns"]), groups["rows"])
    figure = heatmap_figure([table], ["图"])
    assert len(figure.axes) == 2  # the heat map and its colour bar
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert texts and all("n=" in t for t in texts)


def test_the_collector_is_paused_while_counting_and_restored_after() -> None:
    import gc

    from medrealmm.store.runstore import gc_paused

    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        assert not gc.isenabled()
        raise RuntimeError("a failed read")
    assert gc.isenabled()  # as it was, even after an error
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # a caller's own pause is kept
    finally:
        gc.enable()


def test_report_carries_the_paired_differences(built_report: ReportResult) -> None:
    folder = built_report.tables[0].parent
    payload = json.loads((folder / "paired_differences.json").read_text(encoding="utf-8"))
    assert payload["columns"][:6] == [
        *("model_a", "images_a", "grader_a", "model_b", "images_b", "grader_b")
    ]
    assert {"cases", "consultations", "difference", "ci_low", "ci_high", "p_value"} <= set(
        payload["columns"]
    )
    assert payload["rows"] and all(0 <= r["p_value"] <= 1 for r in payload["rows"])
    graders = {(r["grader_a"], r["grader_b"]) for r in payload["rows"]}
    assert any(a != b for a, b in graders)  # another grader against the primary
    assert "成对比较" in built_report.html.read_text(encoding="utf-8")
