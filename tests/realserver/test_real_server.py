"""The real model path against a server nobody here wrote (``pytest -m real_server``).

llama-cpp-python's OpenAI-compatible server with SmolLM2-135M on loopback: it rejects
``json_schema`` (500), answers one request at a time and cuts replies at ``max_tokens``.
The tests assert behaviour (rows, recorded failures, resume), never the model's quality.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.llm import (
    ChatRequest,
    Completion,
    GenerationParams,
    Message,
    OpenAICompatibleClient,
)
from medrealmm.schema import Instance, Response
from medrealmm.store import RunStore, stages
from medrealmm.testing.llama_server import MODEL_ALIAS, LlamaServer, missing_reason

pytestmark = [
    pytest.mark.real_server,
    pytest.mark.slow,
    pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason())),
]

CLI = [sys.executable, "-c", "from medrealmm.cli import main; main()"]
CONSULTATIONS = 2
SECOND_GRADER = "smollm2-warm"
#: As a user runs it: no progress bars in captured output, the capability probe on.
ENV = {"MEDREALMM_PROGRESS": "0", "MEDREALMM_PROBE": "on"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LlamaServer(log=log) as running:
        yield running


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first demo consultations with their images: a few calls, not a few hundred."""
    source = bundled_corpus_dir()
    folder = tmp_path_factory.mktemp("corpus")
    lines = (source / CORPUS_FILE).read_text(encoding="utf-8").splitlines()[:CONSULTATIONS]
    (folder / CORPUS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copytree(source / "images", folder / "images")
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory, server: LlamaServer) -> Path:
    # No structured mode or vision declared: the automatic probe must find that SmolLM2 is
    # text-only and refuses json_schema, so that no stage sends it image parts.
    entry = {
        "name": MODEL_ALIAS,
        "model": MODEL_ALIAS,
        "base_url": server.base_url,
        "concurrency": 1,
        "timeout_s": 300,
        "max_attempts": 2,
        "params": {"max_tokens": 96},
    }
    # A second grader on the same server for the two-grader panel (its own name, so its own
    # cache entries and rows; a different temperature, so its own verdicts).
    other = {**entry, "name": SECOND_GRADER, "params": {"max_tokens": 96, "temperature": 0.7}}
    path = tmp_path_factory.mktemp("config") / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [entry, other]}), encoding="utf-8")
    return path


def cli(*args: object, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **ENV}
    return subprocess.run(
        [*CLI, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env
    )


def assert_clean(result: subprocess.CompletedProcess[str], *allowed: int) -> None:
    """A run ends with its own summary, never a traceback, and an exit code that says so."""
    output = result.stdout + result.stderr
    assert result.returncode in (0, *allowed), output[-3000:]
    assert "Traceback" not in output, output[-3000:]


@pytest.fixture(scope="module")
def offline_chain(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    """Instances and rubrics from the offline baseline: input for the real eval stages."""
    run = tmp_path_factory.mktemp("chain") / "run"
    assert_clean(cli("mccp", "extract", corpus, run, "--from", "raw"))
    assert_clean(cli("rubric", "generate", run))
    with RunStore(run) as store:
        assert store.count(stages.MCCP_INSTANCE) >= 1
    return run


def fresh_copy(run: Path, folder: Path) -> Path:
    target = folder / "copy"
    shutil.copytree(run, target)
    return target


def test_mccp_extract_on_the_real_server_records_every_consultation(
    tmp_path: Path, corpus: Path, models: Path
) -> None:
    run = tmp_path / "run"
    # k = 2 challenge points per consultation (the paper's rule is k = 1, covered offline)
    args = ["mccp", "extract", corpus, run, "--from", "raw", "--limit", "1", "--points", "2"]
    first = cli(*args, "--min-gap", "2", "--model", MODEL_ALIAS, "--models-config", models)
    assert_clean(first, 1)
    output = first.stdout + first.stderr
    assert "vision no" in first.stderr and "probed" in first.stderr, output[-2000:]
    if first.returncode == 1:
        assert "failed" in output  # failures are named, with the exit code to match
    with RunStore(run) as store:
        # The consultation ended as an instance, a discard record or a recorded failure.
        ended = store.keys(stages.MCCP_DISCARDED, status=None) | {
            key.split("#")[0] for key in store.keys(stages.MCCP_INSTANCE)
        }
        failures = store.failures(stages.MCCP_DISCARDED)
        turns = sorted(i.t_star for i in store.iter(stages.MCCP_INSTANCE, Instance))
    assert ended, output[-2000:]
    assert len(turns) <= 2 and all(b - a >= 2 for a, b in itertools.pairwise(turns))
    for error in failures.values():
        assert error.strip(), "a failure without its reason"


def test_rubric_generate_on_the_real_server_leaves_a_row_per_instance(
    tmp_path: Path, offline_chain: Path, models: Path
) -> None:
    run = fresh_copy(offline_chain, tmp_path)
    with RunStore(run) as store:
        instances = store.keys(stages.MCCP_INSTANCE)
        for key in list(store.keys(stages.RUBRIC_ROUND)):
            store.delete(stages.RUBRIC_ROUND, key)
    args = ["rubric", "generate", run, "--limit", "1"]
    result = cli(*args, "--model", MODEL_ALIAS, "--models-config", models)
    assert_clean(result, 1)
    with RunStore(run) as store:
        rounds = {key.split("#")[0] for key in store.keys(stages.RUBRIC_ROUND, status=None)}
        failures = store.failures(stages.RUBRIC_ROUND)
    assert rounds == set(sorted(instances)[:1])  # each instance: a rubric or a recorded failure
    for error in failures.values():
        assert error.startswith("[")  # every failure carries its reason


def _eval_args(run: Path, models: Path) -> list[object]:
    return [
        "eval", "run", run, "--model", MODEL_ALIAS, "--grader", MODEL_ALIAS,
        "--models-config", models, "--images", "off", "--grader-images", "off", "--limit", "1",
    ]  # fmt: skip


def _verdicts(run: Path) -> dict[str, object]:
    with RunStore(run) as store:
        return {
            key: store.get_raw(stages.EVAL_VERDICT, key) for key in store.keys(stages.EVAL_VERDICT)
        }


def test_eval_run_score_and_report_with_a_real_respondent_and_grader(
    tmp_path: Path, offline_chain: Path, models: Path
) -> None:
    run = fresh_copy(offline_chain, tmp_path)
    result = cli(*_eval_args(run, models))
    assert_clean(result, 1)
    with RunStore(run) as store:
        responses = store.keys(stages.EVAL_RESPONSE)
        assert len(responses) == 1  # --limit 1
        verdicts = store.count(stages.EVAL_VERDICT)
    assert verdicts >= 1
    score = cli("eval", "score", run, "--json", tmp_path / "score.json")
    assert_clean(score, 1)
    table = json.loads((tmp_path / "score.json").read_text(encoding="utf-8"))
    assert table["usage"], "usage was not recorded"
    report = cli("report", run, tmp_path / "report")
    assert_clean(report)
    assert (tmp_path / "report" / "index.html").is_file()
    with RunStore(run) as store:
        replies = [r for r in store.iter(stages.EVAL_RESPONSE, Response) if r.text is not None]
    for reply in replies:  # the answer streamed through llama.cpp's server (stream: auto)
        latency = reply.latency
        assert latency is not None and latency.first_token_s is not None, latency
        assert 0 < latency.first_token_s <= latency.total_s


def test_a_streamed_answer_is_the_plain_answer_on_the_real_server(server: LlamaServer) -> None:
    """Same request, streamed and whole, at temperature 0: the same text and token count.

    A first, discarded call puts the prompt in the server's cache: llama.cpp then evaluates
    only its last token for both compared calls, so greedy decoding follows the same path (a
    cold prompt evaluated in one batch can round differently and flip a near-tie token)."""

    async def both() -> tuple[Completion, Completion]:
        settings = {"base_url": server.base_url, "timeout_s": 300, "concurrency": 1}
        params = GenerationParams(max_tokens=24, seed=7)
        streamed = OpenAICompatibleClient(MODEL_ALIAS, params=params, **settings)
        plain = OpenAICompatibleClient(MODEL_ALIAS, params=params, stream=False, **settings)
        request = ChatRequest(
            task="evaluate.respond", messages=[Message.text("user", "Name three colours.")]
        )
        try:
            await plain.complete(request)  # warms the prompt cache; not compared
            return await streamed.complete(request), await plain.complete(request)
        finally:
            await streamed.aclose()
            await plain.aclose()

    streamed, plain = asyncio.run(both())
    assert streamed.first_token_s is not None, streamed.first_token_note
    assert 0 < streamed.first_token_s <= streamed.latency_s
    assert streamed.text == plain.text and streamed.finish_reason == plain.finish_reason
    # llama-cpp-python's server ignores stream_options (no usage chunk), so the streamed count
    # is one per content chunk, and it may merge tokens it held back (an unfinished UTF-8
    # character).
    counted, reported = streamed.usage.completion_tokens, plain.usage.completion_tokens
    assert abs(counted - reported) <= max(1, reported // 10), (counted, reported)


def test_eval_killed_mid_run_resumes_without_losing_or_repeating_work(
    tmp_path: Path, offline_chain: Path, models: Path
) -> None:
    run = fresh_copy(offline_chain, tmp_path)
    env = {**os.environ, **ENV}
    process = subprocess.Popen(
        [*CLI, *map(str, _eval_args(run, models))],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline and process.poll() is None:
            with RunStore(run) as store:
                if store.count(stages.EVAL_VERDICT) >= 1:
                    break
            time.sleep(1)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()
    at_kill = _verdicts(run)
    assert at_kill, "no verdict was stored before the kill"
    assert_clean(cli(*_eval_args(run, models)), 1)
    after = _verdicts(run)
    for key, row in at_kill.items():
        assert after[key] == row  # finished work kept exactly as it was
    with RunStore(run) as store:
        calls = len(store.cache)
    assert_clean(cli(*_eval_args(run, models)), 1)
    with RunStore(run) as store:
        assert len(store.cache) == calls  # a finished run asks nothing again


def _rows(run: Path, stage: str) -> dict[str, dict[str, object]]:
    with RunStore(run) as store:
        return {key: store.get_raw(stage, key) or {} for key in store.keys(stage, status=None)}


def test_abstain_policy_and_a_two_grader_panel_end_to_end(
    tmp_path: Path, offline_chain: Path, models: Path
) -> None:
    run = fresh_copy(offline_chain, tmp_path)
    args = [*_eval_args(run, models), "--grader", SECOND_GRADER, "--abstain", "incomplete"]
    result = cli(*args)
    assert_clean(result, 1)
    panel = f"panel-majority({MODEL_ALIAS},{SECOND_GRADER})"
    verdicts = _rows(run, stages.EVAL_VERDICT)
    raters = {key.split("|")[0] for key in verdicts}
    output = (result.stdout + result.stderr)[-3000:]
    assert {MODEL_ALIAS, SECOND_GRADER} <= raters, output
    for key, row in verdicts.items():  # a failed call is never turned into a verdict
        assert (row.get("status") == "ok") == (row.get("value") is not None), key
        if key.startswith(panel + "|"):
            assert row.get("status") in ("ok", "abstained")
    scores = _rows(run, stages.EVAL_SCORE)
    for key, row in scores.items():
        if row.get("abstained_criteria"):  # --abstain incomplete: no score, never a 0
            assert row["score"] is None, key
    assert_clean(cli(*args), 1)  # a rerun keeps every finished verdict as it was
    after = _rows(run, stages.EVAL_VERDICT)
    for key, row in verdicts.items():
        if row.get("status") in ("ok", "abstained") and not key.startswith(panel + "|"):
            assert after[key] == row, key
    score = cli("eval", "score", run, "--grader", panel, "--json", tmp_path / "s.json")
    assert_clean(score, 1)
    if score.returncode == 0:
        table = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
        assert table["panel"]["method"] == "majority"
        assert all(spec["abstain"] == "incomplete" for spec in table["evaluations"])


def test_grouped_grading_end_to_end(tmp_path: Path, offline_chain: Path, models: Path) -> None:
    run = fresh_copy(offline_chain, tmp_path)
    args = [*_eval_args(run, models), "--grading", "grouped"]
    assert_clean(cli(*args), 1)
    verdicts = _rows(run, stages.EVAL_VERDICT)
    assert verdicts and all(k.startswith(f"{MODEL_ALIAS}[grouped]|") for k in verdicts)
    for key, row in verdicts.items():
        assert row.get("status") in ("ok", "abstained", "failed"), key
        if row.get("status") == "failed":
            assert str(row.get("error") or "").strip(), key  # with its reason
    with RunStore(run) as store:
        calls = len(store.cache)
    assert_clean(cli(*args), 1)
    with RunStore(run) as store:
        assert len(store.cache) == calls  # nothing asked again
