"""Inference and Grader against the real OpenAI client and a loopback OpenAI-compatible server."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from medrealmm.evaluate import EvalSettings, load_scores, run_evaluation
from medrealmm.llm.dialogue import WITHHELD_IMAGE
from medrealmm.schema import Instance, Response, Verdict, VerdictStatus
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import demo_instances, fill_store

REPLY = "您好，从照片看考虑足癣，建议外用抗真菌药膏，如加重请线下就诊。"
SECRET = "这是原始医生回复中独有的一句话甲乙丙丁"


def is_grader(body: dict[str, Any]) -> bool:
    return "response_format" in body


def responder(body: dict[str, Any]) -> FakeReply:
    if is_grader(body):
        return FakeReply(content=json.dumps({"rationale": "符合", "met": True}))
    return FakeReply(content=REPLY)


@pytest.fixture()
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder) as fake:
        yield fake


def models_yaml(tmp_path: Path, server: FakeOpenAIServer, **params: Any) -> Path:
    entry = {"name": "fake-vlm", "model": "fake-vlm", "base_url": server.base_url}
    entry["concurrency"] = 4
    if params:
        entry["params"] = params
    judge = {"name": "fake-judge", "model": "fake-judge", "base_url": server.base_url}
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [entry, judge]}), encoding="utf-8")
    return path


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[RunStore]:
    instances = [
        i.model_copy(update={"target_reply": i.target_reply + SECRET}) for i in demo_instances(2)
    ]
    with RunStore(tmp_path / "run") as run:
        fill_store(run, instances)
        yield run


def settings(config: Path, **kw: Any) -> EvalSettings:
    base: dict[str, Any] = {"model": "fake-vlm", "grader": "fake-judge", "models_config": config}
    base.update(kw)
    return EvalSettings(**base)


def user_content(body: dict[str, Any]) -> Any:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def test_images_on_are_sent_inline_as_base64(
    tmp_path: Path, server: FakeOpenAIServer, store: RunStore
) -> None:
    run_evaluation(store, settings(models_yaml(tmp_path, server), grader_images=False))
    respond = [b for b in server.requests if not is_grader(b)]
    assert len(respond) == 2
    instances = list(store.iter(stages.MCCP_INSTANCE, Instance))
    sent = []
    for body in respond:  # requests arrive in any order
        content = user_content(body)
        images = [p for p in content if p["type"] == "image_url"]
        assert all(p["image_url"]["url"].startswith("data:image/") for p in images)
        text = "".join(p["text"] for p in content if p["type"] == "text")
        assert WITHHELD_IMAGE not in text
        sent.append(len(images))
        assert any(i.context[0].content.strip() in text for i in instances)
    assert sorted(sent) == sorted(i.image_count for i in instances) and min(sent) > 0
    graded = [b for b in server.requests if is_grader(b)]
    assert graded and all(isinstance(user_content(b), str) for b in graded)  # grader images off


def test_images_off_withholds_pixels_behind_a_neutral_placeholder(
    tmp_path: Path, server: FakeOpenAIServer, store: RunStore
) -> None:
    run_evaluation(store, settings(models_yaml(tmp_path, server), images=False))
    respond = [b for b in server.requests if not is_grader(b)]
    content = user_content(respond[0])
    assert isinstance(content, str) and WITHHELD_IMAGE in content
    assert "image_url" not in json.dumps(respond)
    keys = store.keys(stages.EVAL_RESPONSE)
    assert all("|txt|" in key for key in keys)


def test_grader_never_sees_the_original_physician_reply(
    tmp_path: Path, server: FakeOpenAIServer, store: RunStore
) -> None:
    outcome = run_evaluation(store, settings(models_yaml(tmp_path, server)))
    graded = [b for b in server.requests if is_grader(b)]
    llm_criteria = 3 * 2  # three LLM criteria (one is a rule) for each of two instances
    assert len(graded) == llm_criteria
    wire = json.dumps(server.requests, ensure_ascii=False)
    assert SECRET not in wire
    first = json.dumps(graded[0], ensure_ascii=False)
    assert REPLY in first and "image_url" in first  # y and x (with images) are there
    assert outcome.incomplete == 0
    assert all(s.score is not None for s in outcome.scores)


def test_every_criterion_is_one_grader_call_with_the_criterion_text(
    tmp_path: Path, server: FakeOpenAIServer, store: RunStore
) -> None:
    run_evaluation(store, settings(models_yaml(tmp_path, server)))
    graded = [json.dumps(b, ensure_ascii=False) for b in server.requests if is_grader(b)]
    assert sum("询问症状持续时间和既往病史" in b for b in graded) == 2
    assert sum("扣分项" in b and "建议患者自行停药或加量" in b for b in graded) == 2
    assert not any("回复不超过500字" in b for b in graded)  # the rule criterion is code


def test_malformed_grader_output_is_recorded_failed_and_case_incomplete(
    tmp_path: Path, store: RunStore
) -> None:
    counter = itertools.count()

    def broken(body: dict[str, Any]) -> FakeReply:
        # a different bad answer each time, so no retry is answered from the cache
        bad = f"我认为满足（第{next(counter)}次）"
        return FakeReply(content=bad) if is_grader(body) else FakeReply(content=REPLY)

    with FakeOpenAIServer(broken) as server:
        outcome = run_evaluation(store, settings(models_yaml(tmp_path, server), attempts=3))
        graded = [b for b in server.requests if is_grader(b)]
        assert len(graded) == 6 * 3  # every LLM criterion asked three times
        repair = graded[-1]["messages"]
        assert repair[-2]["role"] == "assistant" and "我认为满足" in repair[-2]["content"]
        assert "无法通过校验" in repair[-1]["content"]
        assert outcome.incomplete == 2 and outcome.verdicts.failed == 6
        for score in outcome.scores:
            assert score.score is None and not score.complete
            assert sorted(score.failed_criteria) == ["c1", "c2", "c3"]
        failed = store.get(
            stages.EVAL_VERDICT, next(iter(store.keys(stages.EVAL_VERDICT))), Verdict
        )
        assert failed is not None
        calls = len(server.requests)
        run_evaluation(store, settings(models_yaml(tmp_path, server), attempts=3))
        assert len(server.requests) == calls  # finished (if failed) verdicts are not re-asked
    assert load_scores(store, "fake-judge")[0].score is None


def test_retry_failed_asks_again_for_malformed_verdicts(tmp_path: Path, store: RunStore) -> None:
    def broken(body: dict[str, Any]) -> FakeReply:
        return FakeReply(content="无法判断") if is_grader(body) else FakeReply(content=REPLY)

    with FakeOpenAIServer(broken) as server:
        first = run_evaluation(store, settings(models_yaml(tmp_path, server), limit=1))
    assert first.incomplete == 1
    with FakeOpenAIServer(responder) as server:
        config = models_yaml(tmp_path, server)
        again = run_evaluation(store, settings(config, limit=1, retry_failed=True))
        assert again.incomplete == 0 and again.verdicts.done == 3
        assert all(is_grader(b) for b in server.requests)  # the finished reply was kept


@pytest.mark.parametrize("content", ["  ", None])
def test_empty_or_refused_reply_is_graded_as_a_reply_not_dropped(
    tmp_path: Path, store: RunStore, content: str | None
) -> None:
    def silent(body: dict[str, Any]) -> FakeReply:
        if is_grader(body):
            return FakeReply(content=json.dumps({"rationale": "未作答", "met": False}))
        return FakeReply(content=content)

    with FakeOpenAIServer(silent) as server:
        first = run_evaluation(store, settings(models_yaml(tmp_path, server), limit=1))
    (score,) = first.scores
    assert first.incomplete == 0 and score.complete and score.score is not None
    (response,) = store.iter(stages.EVAL_RESPONSE, Response)
    assert response.status is VerdictStatus.OK and response.text == ""


def test_truncated_reply_is_graded_as_written_and_flagged(tmp_path: Path, store: RunStore) -> None:
    def cut(body: dict[str, Any]) -> FakeReply:
        if is_grader(body):
            return responder(body)
        return FakeReply(content=REPLY[:10], finish_reason="length")

    with FakeOpenAIServer(cut) as server:
        outcome = run_evaluation(store, settings(models_yaml(tmp_path, server), limit=1))
    assert outcome.incomplete == 0
    (response,) = store.iter(stages.EVAL_RESPONSE, Response)
    assert response.truncated and response.text == REPLY[:10]


def test_permanent_failure_is_not_asked_again_unless_retry_failed(
    tmp_path: Path, store: RunStore
) -> None:
    def too_long(body: dict[str, Any]) -> FakeReply:
        if is_grader(body):
            return responder(body)
        return FakeReply(status=400, content="maximum context length is 2048 tokens")

    with FakeOpenAIServer(too_long) as server:
        config = models_yaml(tmp_path, server)
        run_evaluation(store, settings(config, limit=1))
        asked = len(server.requests)
        run_evaluation(store, settings(config, limit=1))
        assert len(server.requests) == asked  # a plain rerun does not ask again
        run_evaluation(store, settings(config, limit=1, retry_failed=True))
        assert len(server.requests) == asked + 1
    (response,) = store.iter(stages.EVAL_RESPONSE, Response)
    assert "[context_length]" in (response.error or "")


def test_grader_repairs_a_malformed_reply(
    tmp_path: Path, server: FakeOpenAIServer, store: RunStore
) -> None:
    run_evaluation(store, settings(models_yaml(tmp_path, server), limit=1, grader="offline"))
    server.script(FakeReply(content='```json\n{"met": "maybe"}\n```'))
    outcome = run_evaluation(store, settings(models_yaml(tmp_path, server), limit=1))
    assert outcome.incomplete == 0
    verdicts = next(s.verdicts for s in outcome.scores)
    assert all(v.status is VerdictStatus.OK for v in verdicts)


def test_transport_failure_is_retried_on_the_next_run(tmp_path: Path, store: RunStore) -> None:
    down = {"grader": True}

    def flaky(body: dict[str, Any]) -> FakeReply:
        if is_grader(body) and down["grader"]:
            return FakeReply(status=503, content="overloaded")
        return responder(body)

    with FakeOpenAIServer(flaky) as server:
        config = models_yaml(tmp_path, server)
        first = run_evaluation(store, settings(config))
        assert first.incomplete == 2 and store.failures(stages.EVAL_VERDICT)
        down["grader"] = False
        second = run_evaluation(store, settings(config))
    assert second.incomplete == 0 and not store.failures(stages.EVAL_VERDICT)
    respond = [b for b in server.requests if not is_grader(b)]
    assert len(respond) == 2  # replies were finished and never asked again


def test_k_samples_are_distinct_calls_with_the_configured_settings(
    tmp_path: Path, server: FakeOpenAIServer, store: RunStore
) -> None:
    config = models_yaml(tmp_path, server, temperature=0.7, top_p=0.95, extra_body={"top_k": 32})
    outcome = run_evaluation(store, settings(config, k=3, limit=1, grader="offline"))
    respond = [b for b in server.requests if not is_grader(b)]
    assert len(respond) == 3
    assert sorted(str(b.get("seed")) for b in respond) == ["1", "2", "None"]
    assert all(b["temperature"] == 0.7 and b["top_p"] == 0.95 for b in respond)
    assert all(b["top_k"] == 32 for b in respond)
    assert sorted(s.sample for s in outcome.scores) == [0, 1, 2]
    responses = list(store.iter(stages.EVAL_RESPONSE, Response))
    assert len(responses) == 3 and not any(r.is_baseline for r in responses)


def test_usage_is_accounted_per_model_and_stage(
    tmp_path: Path, server: FakeOpenAIServer, store: RunStore
) -> None:
    config = models_yaml(tmp_path, server)
    run_evaluation(store, settings(config))
    run_evaluation(store, settings(config, images=False))
    usage = {(u["stage"], u["model"]): u for u in store.usage()}
    assert usage[(stages.EVAL_RESPONSE, "fake-vlm")]["calls"] == 4
    assert usage[(stages.EVAL_VERDICT, "fake-judge")]["calls"] == 12
    assert usage[(stages.EVAL_RESPONSE, "fake-vlm")]["prompt_tokens"] > 0
    assert usage[(stages.EVAL_VERDICT, "fake-judge")]["completion_tokens"] > 0


def test_every_model_gets_the_same_prompt(
    tmp_path: Path, server: FakeOpenAIServer, store: RunStore
) -> None:
    config = models_yaml(tmp_path, server)
    run_evaluation(store, settings(config, limit=1, grader="offline"))
    run_evaluation(store, settings(config, model="fake-judge", limit=1, grader="offline"))
    first, second = (b for b in server.requests if not is_grader(b))
    assert (first["model"], second["model"]) == ("fake-vlm", "fake-judge")
    assert first["messages"] == second["messages"]


def test_grader_images_are_kept_on_resume_and_the_other_condition_goes_elsewhere(
    tmp_path: Path, server: FakeOpenAIServer, store: RunStore
) -> None:
    from medrealmm.evaluate.provenance import SettingConflict

    config = models_yaml(tmp_path, server)
    run_evaluation(store, settings(config, grader_images=True))
    first = [b for b in server.requests if is_grader(b)]
    assert first and all(not isinstance(user_content(b), str) for b in first)  # pixels sent
    server.requests.clear()
    with pytest.raises(SettingConflict, match=r"--grader-images on.*--grader-images off"):
        run_evaluation(store, settings(config, grader_images=False))
    run_evaluation(store, settings(config))  # left out: on, as recorded; nothing regraded
    assert not [b for b in server.requests if is_grader(b)]
    with RunStore(tmp_path / "text-only") as other:  # the other condition: its own results
        fill_store(other, demo_instances(2))
        run_evaluation(other, settings(config, grader_images=False))
        again = [b for b in server.requests if is_grader(b)]
        assert len(again) == len(first) and all(isinstance(user_content(b), str) for b in again)
        llm = [v for v in other.iter(stages.EVAL_VERDICT, Verdict) if v.grader_images is not None]
        assert llm and all(v.grader_images is False for v in llm)


def test_tokens_are_priced_from_the_model_yaml_in_score_and_report(
    tmp_path: Path, server: FakeOpenAIServer, store: RunStore
) -> None:
    from typer.testing import CliRunner

    from medrealmm.cli import app
    from medrealmm.evaluate.results import usage_with_cost

    config = models_yaml(tmp_path, server)
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["models"][1].update(price_per_mtok_in=2.0, price_per_mtok_out=8.0)  # the judge only
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    run_evaluation(store, settings(config, grader_images=False))
    rows = usage_with_cost(store)
    judge = [r for r in rows if r["model"] == "fake-judge"]
    assert judge and all(r["cost"] is not None and r["cost"] > 0 for r in judge)
    expected = sum(r["prompt_tokens"] * 2.0 + r["completion_tokens"] * 8.0 for r in judge) / 1e6
    assert abs(sum(r["cost"] for r in judge) - expected) < 1e-6
    assert all(r["cost"] is None for r in rows if r["model"] == "fake-vlm")  # no price given
    run_dir = store.path.parent
    score = CliRunner().invoke(app, ["eval", "score", str(run_dir)])
    assert score.exit_code == 0, score.output
    assert "cost" in score.output and "total" in score.output
    report = CliRunner().invoke(app, ["report", str(run_dir), str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    usage_csv = (tmp_path / "report" / "tables" / "usage.csv").read_text(encoding="utf-8-sig")
    assert "fake-judge" in usage_csv and "cost" in usage_csv


def test_usage_counts_calls_that_failed_for_good(tmp_path: Path, store: RunStore) -> None:
    def refusing_grader(body: dict[str, Any]) -> FakeReply:
        # A 400 in every structured mode: the grader's calls fail for good, once each.
        return FakeReply(status=400) if body["model"] == "fake-judge" else FakeReply(content=REPLY)

    with FakeOpenAIServer(refusing_grader) as fake:
        run_evaluation(store, settings(models_yaml(tmp_path, fake), limit=1))
    usage = {(u["stage"], u["model"]): u for u in store.usage()}
    verdicts = usage[(stages.EVAL_VERDICT, "fake-judge")]
    assert verdicts["failed_calls"] == verdicts["calls"] > 0
    assert verdicts["attempts"] == verdicts["failed_calls"]  # a 400 is not retried
    assert usage[(stages.EVAL_RESPONSE, "fake-vlm")]["failed_calls"] == 0
