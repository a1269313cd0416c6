from __future__ import annotations

from pathlib import Path

import pytest

from medrealmm.store import RunStore, stages

FIGURES = 10  # + the latency figure (the demo generates its replies)


@pytest.mark.slow
def test_demo_ends_by_writing_the_report(demo_run: tuple[Path, list[str]]) -> None:
    out, summary = demo_run
    assert summary[-1].startswith("report: ")
    report = out / "report"
    assert (report / "index.html").is_file()
    # 22 analysis tables (meta-evaluation, Table 4 and Fig 3's counts among them), plus calls
    # and tokens: the demo's offline agents count their calls.
    # + by_position, latency and abstentions
    assert len(list((report / "tables").glob("*.csv"))) == 27
    assert (report / "tables" / "usage.csv").is_file()
    with RunStore(out) as store:
        scored = store.count(stages.EVAL_SCORE)
    if not scored:
        pytest.skip("the demo has no evaluation stage yet: nothing to draw")
    figures = sorted((report / "figures").glob("*.png"))
    assert len(figures) == FIGURES, [p.name for p in figures]
    assert all(p.stat().st_size > 10_000 for p in figures)


@pytest.mark.slow
def test_demo_report_shows_the_meta_evaluation_on_its_simulated_panel(
    demo_run: tuple[Path, list[str]],
) -> None:
    import json

    out, summary = demo_run
    from medrealmm.demo import bundled_panel_labels

    shipped = len(bundled_panel_labels().read_text("utf-8").splitlines())
    # every shipped label is stored: the bundled panel matches the demo it was made from
    # (after changing the demo's agents, rerun scripts/make_demo_panel.py)
    assert f"panel: {shipped} simulated physician labels stored" in " ".join(summary)
    tables = out / "report" / "tables"
    head = json.loads((tables / "meta_eval_headline.json").read_text("utf-8"))
    kinds = {r["rater"]: r["kind"] for r in head["rows"]}
    assert kinds["offline-baseline"] == "grader"
    assert sorted(r for r, k in kinds.items() if k == "physician") == ["医生丙", "医生乙", "医生甲"]
    assert "模拟" in head["title"]
    assert (tables / "meta_eval.csv").is_file()
    html = (out / "report" / "index.html").read_text("utf-8")
    assert "balanced F1" in html and "表 4" in html and "图 3" in html
