"""A run probes each endpoint once and uses what works: a text-only grader that refuses
``json_schema`` gets neither image parts nor that mode, and a second run asks nothing again."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from medrealmm.evaluate import ONLINE, EvalSettings, run_evaluation
from medrealmm.llm import probe
from medrealmm.schema import Verdict, VerdictStatus
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import demo_instances, fill_store


def text_only_judge(body: dict[str, Any]) -> FakeReply:
    """Like llama.cpp without a projector: no json_schema mode, no image parts."""
    if (body.get("response_format") or {}).get("type") == "json_schema":
        return FakeReply(status=400, content="json_schema is not supported")
    if any(isinstance(m["content"], list) for m in body["messages"]):
        return FakeReply(status=500, content="image input is not supported")
    return FakeReply(content=json.dumps({"ok": True, "rationale": "符合", "met": True}))


def is_probe(body: dict[str, Any]) -> bool:
    text = json.dumps(body["messages"], ensure_ascii=False)
    return "只回答 JSON" in text or "颜色？" in text


def test_a_run_probes_once_and_never_sends_images_to_a_text_only_grader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(probe.PROBE_ENV, "on")
    with FakeOpenAIServer(text_only_judge) as server, RunStore(tmp_path / "run") as store:
        fill_store(store, demo_instances(2))
        entry = {"name": "judge", "model": "judge", "base_url": server.base_url}
        config = tmp_path / "models.yaml"
        config.write_text(yaml.safe_dump({"models": [entry]}), encoding="utf-8")
        settings = EvalSettings(
            model=ONLINE, grader="judge", models_config=config, grader_images=True
        )
        with caplog.at_level(logging.WARNING, logger="medrealmm.probe"):
            run_evaluation(store, settings)
        probes = [b for b in server.requests if is_probe(b)]
        graded = [b for b in server.requests if not is_probe(b)]
        assert 2 <= len(probes) <= 3  # json_schema refused, json_object with schema, image
        assert graded and not any(
            isinstance(m["content"], list) for b in graded for m in b["messages"]
        )
        assert not any(b["response_format"]["type"] == "json_schema" for b in graded)
        verdicts = list(store.iter(stages.EVAL_VERDICT, Verdict))
        assert verdicts and all(v.status == VerdictStatus.OK for v in verdicts)
        assert all(v.grader_images is not True for v in verdicts)
        lines = [r.getMessage() for r in caplog.records if r.name == "medrealmm.probe"]
        assert len(lines) == 1 and "vision no" in lines[0] and "judge" in lines[0]

        server.requests.clear()
        probe._announced.clear()  # a new process
        run_evaluation(store, replace(settings, grader_images=False))
        assert not [b for b in server.requests if is_probe(b)]  # kept in the run store
