"""The consumer's path: evaluate a release (read-only) into a separate run, same Score."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate import EvalSettings, load_results, run_evaluation
from medrealmm.evaluate.source import results_store
from medrealmm.io import file_sha256
from medrealmm.llm import OFFLINE_NAME
from medrealmm.release.dua import record_acceptance
from medrealmm.schema import Response
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import REPLY, accept, tree


def score_of(folder: Path, model: str, images: bool = True) -> float | None:
    with RunStore(folder) as store:
        rows = {(r.model, r.images): r for r in load_results(store).summary()}
    return rows[(model, images)].score


def test_release_is_evaluated_read_only_with_the_builders_score(
    builder: Path, release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accept(release)
    before = tree(release)
    server = FakeOpenAIServer(lambda body: FakeReply(content=REPLY)).start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    runner = CliRunner()
    try:
        for model in ("offline", "fake-vlm"):
            for source, out in ((builder, None), (release, tmp_path / "results")):
                args = ["eval", "run", str(source), "--model", model]
                result = runner.invoke(app, [*args, *(["--out", str(out)] if out else [])])
                assert result.exit_code == 0, result.output
                assert "4 cases scored, 0 incomplete" in " ".join(result.output.split())
    finally:
        server.stop()
    assert tree(release) == before  # nothing written, every checksum unchanged
    results = tmp_path / "results"
    for model in (OFFLINE_NAME, "fake-vlm"):
        assert score_of(results, model) == score_of(builder, model) is not None
    with RunStore(results) as store:
        (spec,) = [s for s in load_results(store).specs.values() if s.label == "fake-vlm"]
    assert spec.benchmark.kind == "release" and spec.benchmark.version == "1.0"
    assert spec.benchmark.manifest_sha256 == file_sha256(release / "manifest.json")
    assert spec.model is not None and spec.model.served == ["fake-vlm"]
    # 4 replies on each side, and once the release's canary; the offline grader grades
    assert server.completed_calls == 9


def test_release_refusals_are_clear_and_write_nothing(release: Path, tmp_path: Path) -> None:
    before = tree(release)
    runner = CliRunner()
    no_out = runner.invoke(app, ["eval", "run", str(release)])
    assert no_out.exit_code == 2 and "read-only" in no_out.output
    unaccepted = runner.invoke(app, ["eval", "run", str(release), "--out", str(tmp_path / "r")])
    assert unaccepted.exit_code == 2 and "accept-dua" in unaccepted.output
    accept(release)
    inside = runner.invoke(app, ["eval", "run", str(release), "--out", str(release / "r")])
    assert inside.exit_code == 2 and "inside the release" in " ".join(inside.output.split())
    (release / "data" / "extra.txt").write_text("x", encoding="utf-8")
    changed = runner.invoke(app, ["eval", "run", str(release), "--out", str(tmp_path / "r")])
    assert changed.exit_code == 2 and "not part of the release" in " ".join(changed.output.split())
    (release / "data" / "extra.txt").unlink()
    assert tree(release) == before


def test_hugging_face_copy_with_hub_files_is_accepted(release: Path, tmp_path: Path) -> None:
    accept(release)
    copy = tmp_path / "hf-copy"
    shutil.copytree(release, copy)
    (copy / ".gitattributes").write_text("*.parquet filter=lfs\n", encoding="utf-8")
    (copy / ".cache" / "huggingface" / "download").mkdir(parents=True)
    (copy / ".cache" / "huggingface" / "download" / "x.metadata").write_text("m", encoding="utf-8")
    store, benchmark = results_store(copy, tmp_path / "results")
    with store:
        outcome = run_evaluation(store, EvalSettings(model="offline"))
    assert benchmark is not None and benchmark.ref.name == "medrealmm-test"
    assert outcome.cases == 4 and outcome.incomplete == 0


def test_a_builders_run_is_never_overwritten_as_results(
    builder: Path, release: Path, tmp_path: Path
) -> None:
    accept(release)
    other: Callable[[], None] = lambda: results_store(release, builder)  # noqa: E731
    with pytest.raises(ValueError, match="builder's run"):
        other()


@pytest.mark.slow
def test_demo_release_scores_as_the_demo_did(
    demo_run: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, _ = demo_run
    release = out / "release"
    monkeypatch.setenv("MEDREALMM_DUA_FILE", str(tmp_path / "dua.json"))
    record_acceptance(
        release / "DUA.md", name="研究员", dataset="medrealmm-demo", release="medrealmm-demo 0.1"
    )
    before = tree(release)
    result = CliRunner().invoke(
        app, ["eval", "run", str(release), "--out", str(tmp_path / "consumer")]
    )
    assert result.exit_code == 0, result.output
    assert tree(release) == before
    consumer = case_scores(tmp_path / "consumer")
    builder = case_scores(out)  # the demo went on to 0.2: it holds more cases than 0.1
    # ... and withdrew one of 0.1's consultations, which the builder's results leave out
    assert len(set(consumer) - set(builder)) == 1
    assert consumer and all(builder[c] == score for c, score in consumer.items() if c in builder)

    # version 0.2 into the same results folder: every unchanged case's reply is reused
    newer = out / "release-0.2"
    record_acceptance(
        newer / "DUA.md", name="研究员", dataset="medrealmm-demo", release="medrealmm-demo 0.2"
    )
    with RunStore(tmp_path / "consumer") as store:
        replies = {r.instance_id: r.eval_id for r in store.iter(stages.EVAL_RESPONSE, Response)}
    again = CliRunner().invoke(
        app, ["eval", "run", str(newer), "--out", str(tmp_path / "consumer")]
    )
    assert again.exit_code == 0, again.output
    with RunStore(tmp_path / "consumer") as store:
        after = {r.instance_id: r.eval_id for r in store.iter(stages.EVAL_RESPONSE, Response)}
        shipped = store.keys(stages.MCCP_INSTANCE)
    assert set(after) == shipped  # the withdrawn case's rows went with it
    assert {case for case in after if case in replies} == shipped & set(replies)
    assert len(shipped - set(replies)) == 2  # the two added cases, asked now
    newest = case_scores(tmp_path / "consumer")
    assert all(newest[case] == consumer[case] for case in newest if case in consumer)


def case_scores(folder: Path) -> dict[str, float | None]:
    """The offline baseline's sample-0 score per instance, with images."""
    with RunStore(folder) as store:
        records = load_results(store).headline
    return {r.instance_id: r.score for r in records if r.condition == (OFFLINE_NAME, True)}


def test_a_builders_run_can_be_evaluated_into_a_separate_folder(
    builder: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    for source, out in ((builder, []), (builder, ["--out", str(tmp_path / "copy")])):
        result = runner.invoke(app, ["eval", "run", str(source), *out, "--model", "offline"])
        assert result.exit_code == 0, result.output
    assert score_of(tmp_path / "copy", OFFLINE_NAME) == score_of(builder, OFFLINE_NAME)
    with RunStore(tmp_path / "copy") as store:
        (spec,) = load_results(store).specs.values()
    assert spec.benchmark.kind == "run" and spec.benchmark.location == str(builder.resolve())
