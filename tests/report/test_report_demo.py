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
    # + by_position, latency and abstentions; + versions (0.1 against 0.2)
    # + paired_differences, by_axis
    assert len(list((report / "tables").glob("*.csv"))) == 30
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


@pytest.mark.slow
def test_demo_takes_two_points_on_its_first_ten_consultations(
    demo_run: tuple[Path, list[str]],
) -> None:
    import json

    from medrealmm.pipeline.demo import DEMO_POINTS_SLICE
    from medrealmm.schema import Instance

    out, _ = demo_run
    with RunStore(out) as store:
        first = set(sorted(store.keys(stages.CORPUS_DEID))[:DEMO_POINTS_SLICE])
        per_case: dict[str, int] = {}
        for instance in store.iter(stages.MCCP_INSTANCE, Instance):
            per_case[instance.consultation_id] = per_case.get(instance.consultation_id, 0) + 1
    assert any(per_case.get(case) == 2 for case in first)
    assert all(n == 1 for case, n in per_case.items() if case not in first)
    tables = out / "report" / "tables"
    overall = json.loads((tables / "overall.json").read_text("utf-8"))["rows"]
    assert any(r["consultations"] < r["cases"] for r in overall)  # k = 2 behind some cases
    position = json.loads((tables / "by_position.json").read_text("utf-8"))["rows"]
    assert {"consultations", "cases"} <= set(position[0])
    assert len({r["stratum"] for r in position}) >= 2


@pytest.mark.slow
def test_demo_releases_version_0_2_and_its_report_compares_the_versions(
    demo_run: tuple[Path, list[str]],
) -> None:
    import json

    from medrealmm.pipeline.demo import NEXT_RELEASE_DIR, WITHDRAWN_CASE

    out, summary = demo_run
    first = json.loads((out / "release" / "manifest.json").read_text("utf-8"))
    second = json.loads((out / NEXT_RELEASE_DIR / "manifest.json").read_text("utf-8"))
    assert (first["version"], second["version"], second["previous_version"]) == (
        "0.1",
        "0.2",
        "0.1",
    )
    assert second["counts"]["added_cases"] == 2 and second["counts"]["withdrawn_cases"] == 1
    changelog = (out / NEXT_RELEASE_DIR / "CHANGELOG.md").read_text("utf-8")
    added, withdrawn = changelog.split("Added cases")[1].split("Withdrawn cases")
    assert "- demo-033" in added and "- demo-034" in added and WITHDRAWN_CASE in withdrawn
    assert any(line.startswith("release 0.2: ") for line in summary)
    versions = json.loads((out / "report" / "tables" / "versions.json").read_text("utf-8"))
    # the Chinese page's title says it in Chinese (``--lang en``: in English)
    assert (
        "在 0.1 与 0.2 共有的 36 个病例上比较；仅 0.2 有 2 个，撤回 1 个；病例集 C 已变化"
        in (versions["title"])
    )
    assert all(r["cases_shared"] < r["cases_newer"] for r in versions["rows"])
