"""Latency beside quality: each generated reply records how fast it came and its time to first
token (streamed), measured against a loopback server with known delays; a reply that was not
streamed says why; latency never changes a score."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from medrealmm.evaluate import EvalSettings, load_scores, run_evaluation
from medrealmm.schema import PHYSICIAN_REPLY_S, ReplyLatency, Response
from medrealmm.stats.latency import summarize_latency, summarize_measured
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import REPLY, demo_instances, fill_store

DELAY_S = 0.4
FIRST_S = 0.2
TOKEN_S = 0.005


def _models(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    entry = {"name": "fake-vlm", "model": "fake-vlm", "base_url": server.base_url}
    entry["concurrency"] = 3
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [entry]}), encoding="utf-8")
    return path


def _evaluate(
    tmp_path: Path, delay: float, **server: Any
) -> tuple[list[Response], dict[str, float | None], str]:
    with (
        FakeOpenAIServer(lambda body: FakeReply(content=REPLY), latency_s=delay, **server) as fake,
        RunStore(tmp_path / "run") as store,
    ):
        fill_store(store, demo_instances(2))
        settings = EvalSettings(model="fake-vlm", models_config=_models(tmp_path, fake))
        run_evaluation(store, settings)
        replies = list(store.iter(stages.EVAL_RESPONSE, Response))
        scores = {s.instance_id: s.score for s in load_scores(store, "offline-baseline")}
        host = fake.base_url.split("//")[1].split("/")[0]
    return replies, scores, host


def test_replies_record_latency_tokens_endpoint_and_concurrency(tmp_path: Path) -> None:
    slow, slow_scores, host = _evaluate(
        tmp_path / "slow", DELAY_S, first_token_delay_s=FIRST_S, token_delay_s=TOKEN_S
    )
    fast, fast_scores, _ = _evaluate(tmp_path / "fast", 0.0)
    generation = DELAY_S + FIRST_S + len(REPLY) * TOKEN_S
    for reply in slow:
        latency = reply.latency
        assert latency is not None
        assert generation <= latency.total_s < generation + 2.0
        first = latency.first_token_s  # streamed (stream: auto): the first token's arrival
        assert first is not None and latency.first_token_note is None
        assert DELAY_S + FIRST_S <= first <= latency.total_s - len(REPLY) * TOKEN_S
        assert latency.output_tokens == len(REPLY) and latency.tokens_per_s is not None
        assert latency.endpoint == host and latency.concurrency == 3
    assert all(r.latency and r.latency.total_s < DELAY_S for r in fast)
    assert slow_scores == fast_scores  # latency never changes a score


def test_the_evaluated_answer_is_the_task_that_streams() -> None:
    from medrealmm.evaluate import RESPOND_TASK
    from medrealmm.llm.openai_compat import STREAMED_TASKS

    assert {RESPOND_TASK} == STREAMED_TASKS


def test_a_server_that_refuses_streams_gives_replies_that_say_why(tmp_path: Path) -> None:
    plain, plain_scores, _ = _evaluate(tmp_path / "plain", 0.0, streaming=False)
    streamed, streamed_scores, _ = _evaluate(tmp_path / "streamed", 0.0)
    for reply in plain:
        assert reply.latency is not None and reply.latency.first_token_s is None
        assert "refused a stream request" in (reply.latency.first_token_note or "")
    assert {r.text for r in plain} == {r.text for r in streamed}
    assert plain_scores == streamed_scores


def _reply(model: str, seconds: float, tokens: int = 100) -> Response:
    return Response(
        instance_id="i", model=model, text="x",
        latency=ReplyLatency(total_s=seconds, output_tokens=tokens, endpoint="h:1"),
    )  # fmt: skip


def test_summary_counts_replies_within_the_physicians_time() -> None:
    replies = [_reply("a", s) for s in (1.0, 5.0, 19.0, 20.0, 30.0)] + [
        _reply("b", 2.0),
        Response(instance_id="i", model="b", text="imported, not measured"),
    ]
    rows = {r.model: r for r in summarize_latency(replies)}
    assert rows["a"].replies == 5 and rows["b"].replies == 1
    assert rows["a"].within_physician_time == pytest.approx(4 / 5)  # 20.0 s counts as within
    assert rows["a"].median_s == 19.0 and rows["a"].median_tokens_per_s == pytest.approx(100 / 19)
    assert rows["a"].median_first_token_s is None and PHYSICIAN_REPLY_S == 20.0
    assert rows["a"].streamed == 0 and rows["a"].first_token_note == "not recorded"


def test_summary_gives_the_median_and_p90_time_to_first_token() -> None:
    replies = [
        Response(
            instance_id="i", model="s", text="x",
            latency=ReplyLatency(total_s=5.0, first_token_s=s, output_tokens=10),
        )
        for s in (0.1, 0.2, 0.3, 0.4, 1.0)
    ] + [
        Response(
            instance_id="i", model="s", text="x",
            latency=ReplyLatency(total_s=5.0, first_token_note="not streamed: config"),
        )
    ]  # fmt: skip
    (row,) = summarize_latency(replies)
    assert row.median_first_token_s == pytest.approx(0.3)
    assert row.p90_first_token_s == pytest.approx(0.76)  # numpy's linear quantile
    assert row.streamed == 5 and row.first_token_note == "not streamed: config"


def test_the_report_shows_latency_beside_quality(tmp_path: Path) -> None:
    from medrealmm.report import write_report

    _evaluate(tmp_path, 0.05)
    with RunStore(tmp_path / "run") as store:
        result = write_report(store, tmp_path / "report", resamples=50)
    table = (tmp_path / "report" / "tables" / "latency.csv").read_text(encoding="utf-8")
    assert "fake-vlm" in table
    header = table.splitlines()[0]
    for column in ("median_s", "first_token_s", "first_token_p90_s", "within_20s"):
        assert column in header
    assert (tmp_path / "report" / "figures" / "fig_latency.png").is_file()
    assert "时延与质量" in result.html.read_text(encoding="utf-8")


def test_the_report_reads_only_the_measured_replies_the_summary_keeps(tmp_path: Path) -> None:
    from medrealmm.report.latency import measured_replies

    _evaluate(tmp_path, 0.05)
    with RunStore(tmp_path / "run", writer=True) as store:
        replies = list(store.iter(stages.EVAL_RESPONSE, Response))
        failed = replies[0].model_copy(update={"sample": 7, "text": None})  # measured, no text
        store.put(stages.EVAL_RESPONSE, "fake-vlm|img|zz|7", failed)
        everything = list(store.iter(stages.EVAL_RESPONSE, Response))
        assert summarize_measured(measured_replies(store)) == summarize_latency(everything)
        assert sum(r.replies for r in summarize_latency(everything)) == len(replies)
