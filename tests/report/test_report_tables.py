from __future__ import annotations

from pathlib import Path

import pytest

from medrealmm.report.tables import build_tables, condition_label
from medrealmm.stats import load_raters, load_scored_cases
from medrealmm.store import RunStore, stages


@pytest.fixture(scope="module")
def tables(synthetic_store: Path) -> dict:
    with RunStore(synthetic_store) as store:
        records = [r for r in load_scored_cases(store) if r.grader == "judge-a"]
        return build_tables(records, load_raters(store), seed=1, resamples=300)


def test_overall_rows_count_incomplete_apart(tables: dict) -> None:
    rows = {(r["model"], r["images"]): r for r in tables["overall"].rows}
    assert set(rows) == {
        ("模型甲", True),
        ("模型甲", False),
        ("model-b", True),
        ("model-b", False),
        ("online", True),
        ("offline-baseline", True),
    }
    model_b = rows[("model-b", True)]
    assert (model_b["cases"], model_b["incomplete"]) == (15, 1)
    for row in rows.values():
        assert 0 <= row["ci_low"] <= row["mean"] <= row["ci_high"] <= 100
    assert rows[("offline-baseline", True)]["baseline"] is True
    assert "离线基线" in rows[("offline-baseline", True)]["label"]
    assert rows[("online", True)]["online"] is True
    means = [r["mean"] for r in tables["overall"].rows]
    assert means == sorted(means, reverse=True)


def test_labels_name_online_mode_and_baseline() -> None:
    assert condition_label("online", True) == "Online（医生原始回复） · 图文"
    assert condition_label("m", False, baseline=True) == "m · 纯文本（离线基线）"


def test_image_gain_and_decomposition(tables: dict) -> None:
    gains = {r["model"]: r for r in tables["images"].rows}
    assert set(gains) == {"模型甲", "model-b"}  # only models run both ways
    for row in gains.values():
        assert row["gain"] == pytest.approx(row["with_images"] - row["without_images"])
    for row in tables["decomposition"].rows:
        assert row["positive_met"] >= 0 and row["negative_triggered"] >= 0


def test_strata_cover_headline_conditions_only(tables: dict) -> None:
    labels = {r["label"] for r in tables["by_department"].rows}
    assert not any("纯文本" in label for label in labels)
    assert {r["stratum"] for r in tables["by_department"].rows} == {"皮肤科", "内分泌科", "中医科"}
    per_model = {}
    for row in tables["by_image_count"].rows:
        per_model.setdefault(row["model"], 0)
        per_model[row["model"]] += row["cases"] + row["incomplete"]
    assert set(per_model.values()) == {16}


def test_histogram_counts_every_complete_case(tables: dict) -> None:
    totals: dict[str, int] = {}
    for row in tables["histogram"].rows:
        totals[row["label"]] = totals.get(row["label"], 0) + row["cases"]
    overall = {r["label"]: r["cases"] for r in tables["overall"].rows}
    assert totals == {label: overall[label] for label in totals}
    assert len(totals) == 4


def test_agreement_and_rater_tables(tables: dict) -> None:
    subsets = {r["criteria"] for r in tables["agreement"].rows}
    assert subsets == {"all", "positive", "negative"}
    assert {r["rater"] for r in tables["rater_scores"].rows} == {"judge-a", "judge-b", "医生小组"}


def test_a_condition_with_only_incomplete_cases_is_shown_not_zeroed(tmp_path: Path) -> None:
    from medrealmm.report.figures import overall_figure
    from medrealmm.schema import CaseScore

    with RunStore(tmp_path) as store:
        for index, score in enumerate((0.5, None)):
            model = "ok-model" if score is not None else "broken-model"
            key = stages.response_key(model, True, f"i{index}", 0)
            store.put(
                stages.EVAL_SCORE,
                f"g|{key}",
                CaseScore(
                    instance_id=f"i{index}", model=model, score=score, complete=score is not None
                ),
            )
        built = build_tables(load_scored_cases(store), load_raters(store), resamples=50)
    rows = {r["model"]: r for r in built["overall"].rows}
    assert rows["broken-model"]["mean"] is None and rows["broken-model"]["incomplete"] == 1
    assert rows["ok-model"]["mean"] == 50.0 and rows["ok-model"]["ci_low"] == 50.0
    assert [r["label"] for r in built["overall"].rows][-1].startswith("broken-model")
    assert built["agreement"].rows == [] and built["images"].rows == []
    assert overall_figure(built["overall"]).axes  # the missing mean is left out, not drawn as 0


def test_overall_says_how_many_consultations_stand_behind_each_figure(tables: dict) -> None:
    """The synthetic store cuts one instance per consultation: as many consultations as cases."""
    for row in tables["overall"].rows:
        assert row["consultations"] == row["cases"]


def test_several_points_of_one_consultation_are_resampled_together() -> None:
    from dataclasses import replace

    from medrealmm.report.tables import overall_table
    from medrealmm.stats.cases import CaseRecord

    base = CaseRecord(
        grader="g", model="m", images=True, instance_id="", sample=0, score=0.0,
        positive_met=0, negative_triggered=0, department="d", subspecialty="s", intent="i",
        stage="s", image_count=1, turn_count=3, baseline=False,
    )  # fmt: skip
    scores = [0.1, 0.9, 0.2, 0.8, 0.5, 0.6]
    records = [
        replace(base, instance_id=f"c{i // 2}-t{i}", consultation_id=f"c{i // 2}", score=s)
        for i, s in enumerate(scores)
    ]
    (row,) = overall_table(records, seed=0, resamples=200).rows
    assert (row["cases"], row["consultations"]) == (6, 3)


def test_scores_by_position_in_the_consultation(tables: dict) -> None:
    assert tables["by_position"].rows  # the synthetic store records no T: one "未标注" stratum


def test_table_3_compares_every_row_on_the_same_cases(synthetic_store: Path) -> None:
    """model-b (img) misses case-000: Online, the imported row and the strongest model are
    all shown over the 15 cases every one of them scored, each with its own n beside it."""
    with RunStore(synthetic_store) as store:
        records = [r for r in load_scored_cases(store) if r.grader == "judge-a" and r.sample == 0]
        tables = build_tables(
            records, load_raters(store), seed=1, resamples=100, imported=[("model-b", True)]
        )
    rows = {r["role"]: r for r in tables["deliberative"].rows}
    assert set(rows) == {"online", "imported", "model"}
    assert rows["model"]["model"] == "模型甲" and rows["model"]["images"] is True
    assert {r["cases"] for r in rows.values()} == {15}
    assert rows["online"]["cases_own"] == 16 and rows["imported"]["cases_own"] == 15
    assert "同一批 15 个病例" in tables["deliberative"].title
    online = [r for r in records if r.model == "online" and r.instance_id != "case-000"]
    expected = 100 * sum(r.score for r in online) / len(online)
    assert rows["online"]["mean"] == pytest.approx(expected, abs=1e-3)


def test_table_2_uses_sample_0_only(tmp_path: Path) -> None:
    """A k=2 run's second sample is not pooled into the agreement items."""
    from medrealmm.schema import Verdict
    from medrealmm.stats.raters import agreement_subset
    from medrealmm.testing.synthetic_store import build_synthetic_store

    path = build_synthetic_store(tmp_path / "run", cases=4)
    with RunStore(path) as store:
        before = agreement_subset(load_raters(store))
        for key, verdict in list(store.items(stages.EVAL_VERDICT, Verdict)):
            rater, _, rest = key.partition("|")
            if "|0|" in rest:
                extra = rest.replace("|0|", "|1|", 1)
                store.put(stages.EVAL_VERDICT, f"{rater}|{extra}", verdict)
        for key, verdict in list(store.items(stages.PANEL_VERDICT, Verdict)):
            rater, _, rest = key.partition("|")
            store.put(stages.PANEL_VERDICT, f"{rater}|{rest.replace('|0|', '|1|', 1)}", verdict)
        after = agreement_subset(load_raters(store))
    assert after.responses == before.responses and before.responses
    assert all(r.endswith("|0") for r in after.responses)


def test_table_3_warns_when_its_cases_overlap_table_2s(synthetic_store: Path) -> None:
    """The paper keeps the deliberate-reply sample and the agreement subset disjoint; the
    synthetic store grades the same cases for both, so Table 3 says how many they share,
    counted here from Table 2's replies."""
    from medrealmm.stats.raters import agreement_subset
    from medrealmm.store.keys import ResponseKey

    with RunStore(synthetic_store) as store:
        records = [r for r in load_scored_cases(store) if r.grader == "judge-a" and r.sample == 0]
        raters = load_raters(store)
        tables = build_tables(records, raters, resamples=20, imported=[("model-b", True)])
    agreed = {ResponseKey.split(k)[2] for k in agreement_subset(raters).responses}
    rows = tables["deliberative"].rows
    shared = rows[0]["cases"]
    table3 = {
        r.instance_id for r in records if r.condition == ("model-b", True) and r.score is not None
    }
    both = len(agreed & table3)
    assert both
    assert (
        f"表 3 的 {shared} 个病例中有 {both} 个也在表 2 的评分对象中"
        in tables["deliberative"].title
    )
