from __future__ import annotations

from pathlib import Path

import pytest

from medrealmm.store import RunStore, stages

FIGURES = 8


@pytest.mark.slow
def test_demo_ends_by_writing_the_report(demo_run: tuple[Path, list[str]]) -> None:
    out, summary = demo_run
    assert summary[-1].startswith("report: ")
    report = out / "report"
    assert (report / "index.html").is_file()
    # 19 analysis tables, plus calls and tokens: the demo's offline agents count their calls.
    assert len(list((report / "tables").glob("*.csv"))) == 20
    assert (report / "tables" / "usage.csv").is_file()
    with RunStore(out) as store:
        scored = store.count(stages.EVAL_SCORE)
    if not scored:
        pytest.skip("the demo has no evaluation stage yet: nothing to draw")
    figures = sorted((report / "figures").glob("*.png"))
    assert len(figures) == FIGURES, [p.name for p in figures]
    assert all(p.stat().st_size > 10_000 for p in figures)
