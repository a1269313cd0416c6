"""The report reads a few fields of many rows (``RunStore.fields``), not whole models: the
records, verdicts and strata it gets are those the whole models give."""

from __future__ import annotations

import gc
from collections import defaultdict
from pathlib import Path

import pytest

from medrealmm.schema import CaseScore, Instance, Response, Verdict
from medrealmm.stats import load_raters, load_scored_cases
from medrealmm.stats.cases import baseline_models, instance_strata, to_record
from medrealmm.stats.raters import PANEL_RATER
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import ScoreKey, VerdictKey
from medrealmm.testing.synthetic_store import build_synthetic_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> RunStore:
    return RunStore(build_synthetic_store(tmp_path_factory.mktemp("lean"), cases=10, seed=5))


def test_case_records_equal_those_built_from_whole_models(store: RunStore) -> None:
    from medrealmm.rubric.rounds import evaluation_rubrics

    instances = {i.id: i for i in store.iter(stages.MCCP_INSTANCE, Instance)}
    baselines = baseline_models(store.iter(stages.EVAL_RESPONSE, Response))
    applicable = {iid: r.version for iid, r in evaluation_rubrics(store).items()}
    expected = [
        to_record(
            ScoreKey.parse(key).rater,
            score,
            instances.get(score.instance_id),
            baselines,
            applicable,
        )
        for key, score in store.items(stages.EVAL_SCORE, CaseScore)
    ]
    assert load_scored_cases(store) == expected
    strata = instance_strata(store)
    for iid, instance in instances.items():
        assert (strata[iid].image_count, strata[iid].turn_count) == (
            instance.image_count,
            instance.turn_count,
        )


def test_rater_verdicts_equal_those_read_as_models(store: RunStore) -> None:
    expected: dict[str, dict[tuple[str, str], bool]] = defaultdict(dict)
    for key, verdict in store.items(stages.EVAL_VERDICT, Verdict):
        if verdict.value is not None:
            parsed = VerdictKey.parse(key)
            expected[parsed.rater][(parsed.response, parsed.criterion_id)] = verdict.value
    data = load_raters(store)
    assert {r: v for r, v in data.verdicts.items() if r in expected} == dict(expected)
    assert all(type(v) is bool for d in data.verdicts.values() for v in d.values())
    with store.sharing():  # Table 2's read: the judges' verdicts on the panel's replies
        table2 = load_raters(store, table2=True)
    replies = {item[0] for item in table2.verdicts.get(PANEL_RATER, {})}
    for rater, found in expected.items():
        mine = {i: v for i, v in found.items() if i[0] in replies}
        assert table2.verdicts.get(rater, {}) == mine


def test_fields_pages_through_a_stage_in_key_order(tmp_path: Path) -> None:
    with RunStore(tmp_path, writer=True) as store:
        for i in range(7):
            store.put("s", f"k{i}", {"a": i, "b": i % 2 == 0})
        store.put("s", "k9", None, status="failed", error="x")
        rows = list(store.fields("s", ("a", "b"), page=3))
        assert rows == [(f"k{i}", i, int(i % 2 == 0)) for i in range(7)]
        with pytest.raises(ValueError, match="field names"):
            list(store.fields("s", ("a') FROM records --",)))
        store.put("s", "l", {"a": [1, 2], "b": []})  # a name ending in '#': its list's length
        assert list(store.fields_under("s", ["l"], ("a#", "b#", "c#"))) == [("l", 2, 0, None)]
        store.put("s", "m", {"a": "text", "b": None, "d": 0})  # '?': whether it holds a value
        assert list(store.fields_under("s", ["m"], ("a?", "b?", "c?", "d?"))) == [("m", 1, 0, 0, 1)]
        with pytest.raises(ValueError, match="field names"):
            list(store.fields("s", ("a') FROM records --#",)))
        # 'having': only the rows whose field is set (not absent, null or false), in SQL
        assert [r[0] for r in store.fields("s", ("a",), having="b", page=2)] == [
            "k0",
            "k2",
            "k4",
            "k6",
            "l",
        ]
        assert [r[0] for r in store.fields("s", ("a",), having="a")] == [
            *(f"k{i}" for i in range(7)),
            *("l", "m"),
        ]
        # several names: the rows where any of them is set ('m': d=0 is set), in one scan
        assert [r[0] for r in store.fields("s", ("a",), having=("b", "d"))] == [
            *("k0", "k2", "k4", "k6", "l", "m")
        ]
        with pytest.raises(ValueError, match="field names"):
            list(store.fields("s", ("a",), having="b') --"))
        with pytest.raises(ValueError, match="field names"):
            list(store.fields("s", ("a",), having=("b", "d') --")))


def test_field_values_give_several_fields_of_each_row_as_json_has_them(tmp_path: Path) -> None:
    with RunStore(tmp_path, writer=True) as store:
        for i in range(5):
            store.put("s", f"k{i}", {"a": i, "b": i % 2 == 0, "c": [i] * i, "d": {"x": 0.1}})
        store.put("s", "k9", None, status="failed", error="x")
        store.put("s", "l", None)  # finished, no payload
        rows = list(store.field_values("s", ("a", "b", "c", "d", "e"), page=2))
        expected = [(f"k{i}", [i, i % 2 == 0, [i] * i, {"x": 0.1}, None]) for i in range(5)]
        expected.append(("l", [None] * 5))
        assert rows == expected
        assert all(type(values[1]) is bool for _, values in rows[:-1])
        for names in (("a",), ("a", "b') FROM records --")):
            with pytest.raises(ValueError, match="field names"):
                list(store.field_values("s", names))


def test_key_ranges_and_heads_read_only_what_they_name(tmp_path: Path) -> None:
    with RunStore(tmp_path, writer=True) as store:
        for rater in ("b", "a-x", "a"):
            for i in range(4):
                store.put("s", f"{rater}|r{i % 2}|c{i}", {"value": i})
        store.put("s", "a|r9|c0", None, status="failed", error="x")
        assert store.key_heads("s") == ["a-x", "a", "b"]  # key order ('-' sorts before '|')
        rows = list(store.fields_under("s", ["a|r1|", "b|r0|", "a|r9|"], ("value",), page=1))
        assert rows == [("a|r1|c1", 1), ("a|r1|c3", 3), ("b|r0|c0", 0), ("b|r0|c2", 2)]


def test_memo_reads_again_once_the_store_changed(tmp_path: Path) -> None:
    with RunStore(tmp_path, writer=True) as store:
        calls = []

        def count() -> int:
            calls.append(1)
            return store.count("s")

        store.memo("n", count), store.memo("n", count)
        assert len(calls) == 2  # outside ``sharing`` nothing is kept
        with store.sharing():
            assert store.memo("n", count) == 0 and store.memo("n", count) == 0
            assert len(calls) == 3
            store.put("s", "k", {"a": 1})
            assert store.memo("n", count) == 1 and len(calls) == 4
            with RunStore(tmp_path) as other:  # another connection's write is seen too
                other.put("s", "k2", {"a": 2})
            assert store.memo("n", count) == 2 and len(calls) == 5
        store.memo("n", count)
        assert len(calls) == 6  # let go on leaving


def test_memo_computes_with_collection_paused(tmp_path: Path) -> None:
    with RunStore(tmp_path, writer=True) as store:
        assert gc.isenabled()
        assert store.memo("gc", gc.isenabled) is False  # no collection walks what it builds
        with store.sharing():
            assert store.memo("gc", lambda: store.memo("inner", gc.isenabled)) is False
            assert gc.isenabled()  # back on after, nested or not
        assert gc.isenabled()
