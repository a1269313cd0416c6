"""A living benchmark: evaluating release N+1 into the results folder of release N reuses every
result whose instance and rubric are unchanged and asks the model only about what is new."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.io import iter_jsonl
from medrealmm.llm import OFFLINE_NAME
from medrealmm.release.build import release_store
from medrealmm.release.layout import ReleaseInfo
from medrealmm.schema import Consultation, Instance, Response
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import REPLY, accept, demo_instances, fill_store

CANARY_LABEL = "MEDREALMM CANARY GUID"


def _release(tmp_path: Path, instances: list[Instance], version: str) -> Path:
    wanted = {i.consultation_id for i in instances}
    corpus = bundled_corpus_dir()
    cases = [c for c in iter_jsonl(corpus / CORPUS_FILE, Consultation) if c.id in wanted]
    folder = tmp_path / f"builder-{version}"
    with RunStore(folder) as store:
        fill_store(store, instances)
        store.put_many(stages.CORPUS_FINAL, ((c.id, c) for c in cases))
        store.set_meta(stages.image_root_key(stages.CORPUS_FINAL), str(corpus))
        info = ReleaseInfo(
            name="medrealmm-test",
            version=version,
            title="t",
            authors=("t",),
            dua="测试用数据使用协议。\n",
        )
        target = tmp_path / f"release-{version}"
        out = release_store(store, target, info, register=tmp_path / "w", allow_unreviewed=True)
    accept(out.out)
    return out.out


def _replies_asked(requests: list[dict[str, Any]]) -> list[str]:
    """The reply requests (the contamination check aside), as comparable text."""
    texts = [json.dumps(r, sort_keys=True, ensure_ascii=False) for r in requests]
    return [t for t in texts if CANARY_LABEL not in t]


def _replies(body: dict[str, Any]) -> FakeReply:
    return FakeReply(content=REPLY)


def test_version_n_plus_1_reuses_unchanged_results_and_asks_only_about_new_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEDREALMM_DUA_FILE", str(tmp_path / "config" / "dua.json"))
    cases = demo_instances(5)
    first = _release(tmp_path, cases[:4], "1.0")  # cases 0-3
    second = _release(tmp_path, cases[1:], "1.1")  # 0 withdrawn, 4 added, 1-3 unchanged
    results = tmp_path / "results"
    with FakeOpenAIServer(_replies) as server:
        entry = {"name": "fake-vlm", "model": "fake-vlm", "base_url": server.base_url}
        models = tmp_path / "models.yaml"
        models.write_text(yaml.safe_dump({"models": [entry]}), encoding="utf-8")
        args = ["--out", str(results), "--model", "fake-vlm", "--models-config", str(models)]
        run = CliRunner().invoke(app, ["eval", "run", str(first), *args])
        assert run.exit_code == 0, run.output
        asked_first = _replies_asked(server.requests)
        with RunStore(results) as store:
            before = {k: r.eval_id for k, r in store.items(stages.EVAL_RESPONSE, Response)}
        run = CliRunner().invoke(app, ["eval", "run", str(second), *args])
        assert run.exit_code == 0, run.output
        asked_second = _replies_asked(server.requests)[len(asked_first) :]
        canaries = len(server.requests) - len(asked_first) - len(asked_second)
    assert len(asked_first) == 4
    assert canaries == 1  # asked once; the second version's check is answered by the cache
    assert len(asked_second) == 1 and asked_second[0] not in asked_first  # only the new case
    with RunStore(results) as store:
        after = {k: r for k, r in store.items(stages.EVAL_RESPONSE, Response)}
    kept = {k for k in after if k in before and after[k].eval_id == before[k]}
    assert {after[k].instance_id for k in kept} == {i.id for i in cases[1:4]}
    assert cases[0].id not in {r.instance_id for r in after.values()}  # withdrawn: gone
    assert cases[4].id in {r.instance_id for r in after.values()}


def test_leaderboard_across_versions_compares_on_shared_cases_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from medrealmm.evaluate import EvalSettings, run_evaluation
    from medrealmm.evaluate.results import load_leaderboard
    from medrealmm.evaluate.source import results_store

    monkeypatch.setenv("MEDREALMM_DUA_FILE", str(tmp_path / "config" / "dua.json"))
    cases = demo_instances(6)
    first = _release(tmp_path, cases[:4], "1.0")  # cases 0-3
    second = _release(tmp_path, cases[1:], "1.1")  # 0 withdrawn, 4-5 added
    stores = []
    for release, out, images in ((first, "a", True), (second, "b", False)):
        store, _ = results_store(release, tmp_path / out)
        with store:
            run_evaluation(store, EvalSettings(model="offline", images=images))
        stores.append(RunStore(tmp_path / out, create=False))
    try:
        results = load_leaderboard(stores)
    finally:
        for store in stores:
            store.close()
    assert results.versions is not None
    assert results.versions.note().startswith(
        "compared on 3 cases shared by 1.0 and 1.1; 2 only in 1.1, 1 withdrawn; C changed "
        "(4 cases in 1.0, 5 in 1.1)"
    )
    assert {r.instance_id for r in results.records} == {i.id for i in cases[1:4]}
    assert {r.condition for r in results.records} == {
        (OFFLINE_NAME, True),
        (OFFLINE_NAME, False),
    }

    a, b, rep = (str(tmp_path / name) for name in ("a", "b", "rep"))
    report = CliRunner().invoke(app, ["report", a, rep, "--add", b, "--resamples", "20"])
    assert report.exit_code == 0, report.output
    overall = json.loads((tmp_path / "rep" / "tables" / "overall.json").read_text("utf-8"))
    assert "在 1.0 与 1.1 共有的 3 个病例上比较" in overall["title"]  # the Chinese page's note
    english = CliRunner().invoke(app, ["report", a, rep + "-en", "--add", b, "--lang", "en"])
    assert english.exit_code == 0, english.output
    overall = json.loads((tmp_path / "rep-en" / "tables" / "overall.json").read_text("utf-8"))
    assert "compared on 3 cases shared by 1.0 and 1.1" in overall["title"]
    assert {r["cases"] for r in overall["rows"]} == {3}


def test_one_model_on_two_versions_is_compared_on_their_shared_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same model and image condition in both folders: two rows named by version (it was
    refused before), and the paired table compares them on the cases both versions hold."""
    from medrealmm.evaluate import EvalSettings, run_evaluation
    from medrealmm.evaluate.source import results_store

    monkeypatch.setenv("MEDREALMM_DUA_FILE", str(tmp_path / "config" / "dua.json"))
    cases = demo_instances(6)
    first = _release(tmp_path, cases[:4], "1.0")
    second = _release(tmp_path, cases[1:], "1.1")
    for release, out in ((first, "a"), (second, "b")):
        store, _ = results_store(release, tmp_path / out)
        with store:
            run_evaluation(store, EvalSettings(model="offline"))
    a, b, rep = (str(tmp_path / name) for name in ("a", "b", "rep"))
    report = CliRunner().invoke(app, ["report", a, rep, "--add", b, "--resamples", "20"])
    assert report.exit_code == 0, report.output
    tables = tmp_path / "rep" / "tables"
    overall = json.loads((tables / "overall.json").read_text("utf-8"))
    models = {r["model"] for r in overall["rows"]}
    assert {f"{OFFLINE_NAME} @1.0", f"{OFFLINE_NAME} @1.1"} <= models
    paired = json.loads((tables / "paired_differences.json").read_text("utf-8"))
    (row,) = [
        r
        for r in paired["rows"]
        if {r["model_a"], r["model_b"]} == {f"{OFFLINE_NAME} @1.0", f"{OFFLINE_NAME} @1.1"}
    ]
    assert row["cases"] == 3  # the shared cases only
