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


def test_pairs_and_rater_scores_are_the_formulas_over_the_subset(store: RunStore) -> None:
    """The table functions count and sum in bulk: they give what ``agreement`` of the two
    verdict lists and the mean ``complete_rubric_score`` give, to the last bit."""
    from medrealmm.stats import agreement, agreement_subset, complete_rubric_score

    data = load_raters(store)
    subset = agreement_subset(data)
    for row in pairwise_agreement(data, subset):
        if row.subset == "all":
            a, b = ([data.verdicts[r][i] for i in subset.items] for r in (row.rater_a, row.rater_b))
            stats = agreement(a, b)
            assert (row.n, row.observed, row.ac1, row.kappa) == (
                *(stats.n, stats.observed, stats.ac1, stats.kappa),
            )
    for score in rater_scores(data, subset):
        found = []
        for response in subset.responses:
            weights = data.weights[ResponseKey.parse(response).instance_id]
            values = {c: data.verdicts[score.rater].get((response, c)) for c in weights}
            verdicts = {c: v for c, v in values.items() if v is not None}
            if (value := complete_rubric_score(weights, verdicts)) is not None:
                found.append(value)
        assert (score.n, score.mean) == (len(found), sum(found) / len(found))


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


def _agreement_store(path: Path) -> RunStore:
    """Two judges grade two models; the panel grades model-a only. Each rubric has two LLM
    criteria and a length rule every grader answers alike."""
    from medrealmm.rubric.rules import length_criterion
    from medrealmm.schema import Criterion, Rubric, Verdict

    store = RunStore(path)
    for case in range(4):
        instance = f"i{case}"
        rubric = Rubric(
            instance_id=instance,
            criteria=[
                Criterion(id="p", text="要点", weight=5),
                Criterion(id="n", text="风险", weight=-5),
                length_criterion("r", 200, -5),
            ],
            approved=True,
        )
        store.put(stages.RUBRIC_FINAL, instance, rubric)
        for model in ("model-a", "model-b"):
            key = stages.response_key(model, True, instance, 0)
            graders = {"j1": (True, case % 2 == 0), "j2": (case != 1, False)}
            graders |= {f"dr{d}": (True, False) for d in range(3)} if model == "model-a" else {}
            for grader, (p, n) in graders.items():
                stage = stages.PANEL_VERDICT if grader.startswith("dr") else stages.EVAL_VERDICT
                for cid, value in (("p", p), ("n", n), ("r", False)):
                    verdict = Verdict(criterion_id=cid, value=value, grader=grader)
                    store.put(stage, f"{grader}|{key}|{cid}", verdict)
    return store


def test_agreement_leaves_code_checked_rules_out_and_lists_them_apart(tmp_path: Path) -> None:
    with _agreement_store(tmp_path) as store:
        data = load_raters(store)
        rows = pairwise_agreement(data)
        rule_rows = pairwise_agreement(data, rules=True)
    llm_all = {(r.rater_a, r.rater_b): r for r in rows if r.subset == "all"}
    assert {r.n for r in llm_all.values()} == {8}  # 4 replies x 2 LLM criteria
    j1_j2 = llm_all[("j1", "j2")]
    assert j1_j2.observed == 0.625  # p: 3/4, n: 2/4 agree; with the rule it would be 9/12
    rule_all = [r for r in rule_rows if r.subset == "all"]
    assert {r.n for r in rule_all} == {4} and {r.observed for r in rule_all} == {1.0}


def test_table2_rows_share_one_declared_subset(tmp_path: Path) -> None:
    from medrealmm.stats.raters import agreement_subset

    with _agreement_store(tmp_path) as store:
        data = load_raters(store)
    subset = agreement_subset(data)
    assert (subset.model, subset.images) == ("model-a", True)  # the model the panel graded
    assert len(subset.responses) == 4 and len(subset.items) == 8 and len(subset.rule_items) == 4
    rows = pairwise_agreement(data, subset)
    for sign in ("all", "positive", "negative"):
        assert len({r.n for r in rows if r.subset == sign}) == 1, sign  # same items every pair
    assert {s.n for s in rater_scores(data, subset)} == {4}
    assert "model-a" in subset.label() and "4 条回复" in subset.label()


def test_intents_and_stages_stratify_by_chinese_name_in_taxonomy_order(store: RunStore) -> None:
    from dataclasses import replace

    records = [r for r in load_scored_cases(store) if r.grader == "judge-a"][:3]
    ids = ["examination_interpretation", "medication_guidance", "not_in_taxonomy"]
    relabelled = [replace(r, intent=i) for r, i in zip(records, ids, strict=True)]
    assert list(stratify(relabelled, "intent")) == ["用药指导", "检查解读", "not_in_taxonomy"]


def test_departments_fold_into_specialty_groups_from_an_editable_mapping(tmp_path: Path) -> None:
    from medrealmm.io import DataError
    from medrealmm.stats.specialty import builtin_specialty_groups, load_specialty_groups

    groups = builtin_specialty_groups()
    assert groups.group_of("消化内科") == groups.group_of("内分泌科") == "内科"
    assert groups.group_of("小儿皮肤科") == "儿科"  # first matching group wins
    assert groups.group_of("航天医学科") == "其他"
    path = tmp_path / "groups.yaml"
    path.write_text(
        "groups:\n  - name: 皮肤\n    fragments: [皮肤]\nother: 别的\n", encoding="utf-8"
    )
    mine = load_specialty_groups(path)
    assert (mine.group_of("皮肤科"), mine.group_of("内科")) == ("皮肤", "别的")
    path.write_text("groups: []\n", encoding="utf-8")
    with pytest.raises(DataError, match="groups"):
        load_specialty_groups(path)
