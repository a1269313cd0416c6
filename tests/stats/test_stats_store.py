from __future__ import annotations

from pathlib import Path

import pytest

from medrealmm.stats import (
    PANEL_RATER,
    STRATA,
    case_means,
    load_raters,
    load_scored_cases,
    pairwise_agreement,
    panel_consensus,
    rater_scores,
    stratify,
)
from medrealmm.stats.cases import primary_grader
from medrealmm.stats.strata import image_bin, turn_bin
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import ResponseKey, VerdictKey
from medrealmm.testing.synthetic_store import build_synthetic_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> RunStore:
    path = build_synthetic_store(tmp_path_factory.mktemp("syn"), cases=12)
    return RunStore(path)


def test_keys_round_trip() -> None:
    key = stages.response_key("a|b", False, "case-1", 2)
    parsed = ResponseKey.parse(key)
    assert (parsed.model, parsed.images, parsed.instance_id, parsed.sample) == (
        "a|b",
        False,
        "case-1",
        2,
    )
    assert VerdictKey.parse(f"judge|{key}|p1") == VerdictKey("judge", key, "p1")
    with pytest.raises(ValueError, match="not a response key"):
        ResponseKey.parse("model|maybe|case|0")


def test_cases_keep_incomplete_out_of_means(store: RunStore) -> None:
    records = load_scored_cases(store)
    assert primary_grader(records, store.get_meta("eval.primary_grader")) == "judge-a"
    mine = [r for r in records if r.grader == "judge-a" and r.condition == ("model-b", True)]
    incomplete = [r for r in mine if r.score is None]
    assert [r.instance_id for r in incomplete] == ["case-000"]
    means = case_means(mine)
    assert "case-000" not in means and len(means) == 11
    assert {r.baseline for r in records if r.model == "offline-baseline"} == {True}
    assert {r.department for r in records} == {"皮肤科", "内分泌科", "中医科"}


def test_stratify_orders_numeric_bins() -> None:
    assert image_bin(3) == (3, "3") and image_bin(9) == (6, "≥6")
    assert turn_bin(1) == (1, "1–4") and turn_bin(4) == (1, "1–4") and turn_bin(5)[1] == "5–8"
    with pytest.raises(ValueError, match="unknown stratification axis"):
        stratify([], "colour")
    assert set(STRATA) >= {"department", "intent", "stage", "image_count", "turn_count"}


def test_stratify_groups_every_record(store: RunStore) -> None:
    records = [r for r in load_scored_cases(store) if r.grader == "judge-a"]
    groups = stratify(records, "image_count")
    assert list(groups) == ["1", "2", "3", "4"]
    assert sum(len(g) for g in groups.values()) == len(records)


def test_panel_consensus_majority_and_ties() -> None:
    votes = {
        "dr1": {("r", "a"): True, ("r", "b"): True},
        "dr2": {("r", "a"): True, ("r", "b"): False},
        "dr3": {("r", "a"): False},
    }
    assert panel_consensus(votes) == {("r", "a"): True}  # b is a 1-1 tie: no consensus


def test_pairwise_matrix_splits_by_criterion_sign(store: RunStore) -> None:
    data = load_raters(store)
    assert set(data.verdicts) == {"judge-a", "judge-b", PANEL_RATER}
    rows = pairwise_agreement(data)
    pairs = {(r.rater_a, r.rater_b) for r in rows}
    assert pairs == {("judge-a", "judge-b"), ("judge-a", PANEL_RATER), ("judge-b", PANEL_RATER)}
    for pair in pairs:
        by_subset = {r.subset: r for r in rows if (r.rater_a, r.rater_b) == pair}
        assert by_subset["positive"].n + by_subset["negative"].n == by_subset["all"].n > 0
        assert 0.5 < by_subset["all"].ac1 <= 1.0
    scores = {s.rater: s for s in rater_scores(data)}
    assert {s.n for s in scores.values()} == {12}  # the responses every rater judged


def test_raters_with_nothing_shared_get_empty_rows(tmp_path: Path) -> None:
    from medrealmm.schema import Verdict

    with RunStore(tmp_path) as store:
        key_a = stages.response_key("m", True, "i1", 0)
        key_b = stages.response_key("m", True, "i2", 0)
        store.put(stages.EVAL_VERDICT, f"j1|{key_a}|c", Verdict(criterion_id="c", value=True))
        store.put(stages.EVAL_VERDICT, f"j2|{key_b}|c", Verdict(criterion_id="c", value=True))
        rows = pairwise_agreement(load_raters(store))
    assert {(r.subset, r.n, r.ac1) for r in rows} == {
        ("all", 0, None),
        ("positive", 0, None),
        ("negative", 0, None),
    }


def test_store_items_pair_keys_with_finished_records(tmp_path: Path) -> None:
    from medrealmm.schema import Verdict

    with RunStore(tmp_path) as store:
        store.put(stages.EVAL_VERDICT, "b", Verdict(criterion_id="b", value=True))
        store.put(stages.EVAL_VERDICT, "a", Verdict(criterion_id="a", value=False))
        store.put(stages.EVAL_VERDICT, "c", None, status="failed", error="boom")
        items = list(store.items(stages.EVAL_VERDICT, Verdict))
    assert [(key, v.criterion_id) for key, v in items] == [("a", "a"), ("b", "b")]


def test_headline_is_the_primary_graders_first_sample(store: RunStore) -> None:
    from dataclasses import replace

    from medrealmm.stats.cases import headline_records

    records = load_scored_cases(store)
    extra = replace(records[0], sample=1, score=0.0)
    chosen = headline_records([*records, extra], "judge-a")
    assert extra not in chosen
    assert {r.grader for r in chosen} == {"judge-a"} and {r.sample for r in chosen} == {0}


def test_weights_follow_the_rubric_evaluation_graded_against(tmp_path: Path) -> None:
    from medrealmm.schema import Criterion, Rubric
    from medrealmm.stats.raters import scored_rubric_weights

    def rubric(instance: str, round_: int, weight: int) -> Rubric:
        return Rubric(
            instance_id=instance,
            round=round_,
            criteria=[Criterion(id="c", text="要点", weight=weight)],
        )

    with RunStore(tmp_path) as store:
        store.put(stages.RUBRIC_ROUND, "a#00", rubric("a", 0, 3))
        store.put(stages.RUBRIC_ROUND, "a#01", rubric("a", 1, 4))
        store.put(stages.RUBRIC_ROUND, "b#00", rubric("b", 0, 5))
        store.put(stages.RUBRIC_FINAL, "b", rubric("b", 2, -6))
        weights = scored_rubric_weights(store)
    assert weights == {"a": {"c": 4}, "b": {"c": -6}}
