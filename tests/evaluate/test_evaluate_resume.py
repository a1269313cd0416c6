"""kill -9 a running evaluation, rerun it, and check no finished call is asked again."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import medrealmm
from medrealmm.evaluate import EvalSettings, run_evaluation
from medrealmm.llm.transport import TRANSPORTS
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer

from .conftest import demo_instances, fill_store
from .test_evaluate_agents import models_yaml, responder


def _count(db: Path, stage: str) -> int:
    with sqlite3.connect(db, timeout=5) as conn:
        return int(
            conn.execute(
                "SELECT COUNT(*) FROM records WHERE stage=? AND status='done'", (stage,)
            ).fetchone()[0]
        )


def _over(config: Path, transport: str) -> Path:
    """The models YAML with every model on ``transport``."""
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    for entry in data["models"]:
        entry["transport"] = transport
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    return config


@pytest.mark.slow  # starts a second Python process
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_kill_9_then_rerun_repeats_no_finished_call(tmp_path: Path, transport: str) -> None:
    run_dir = tmp_path / "run"
    instances = demo_instances(6)
    with RunStore(run_dir) as store:
        fill_store(store, instances)
        db = store.path
    total_verdicts = 6 * 4
    with FakeOpenAIServer(responder, latency_s=0.1) as server:
        config = _over(models_yaml(tmp_path, server), transport)
        env = dict(os.environ, MEDREALMM_PROGRESS="0")
        src = str(Path(medrealmm.__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
        command = [
            sys.executable,
            "-c",
            "from medrealmm.cli import main; main()",
            *("eval", "run", str(run_dir), "--model", "fake-vlm", "--grader", "fake-judge"),
            *("--models-config", str(config)),
        ]
        child = subprocess.Popen(command, env=env)
        deadline = time.monotonic() + 180
        while _count(db, stages.EVAL_VERDICT) < 6:
            assert child.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait()
    done_before = _count(db, stages.EVAL_VERDICT)
    assert 0 < done_before < total_verdicts  # killed mid-run
    # A fresh server for the rerun, so requests the killed process left in flight are not counted.
    with FakeOpenAIServer(responder) as server, RunStore(run_dir) as store:
        config = _over(models_yaml(tmp_path, server), transport)
        finished_calls = len(store.cache)
        outcome = run_evaluation(
            store, EvalSettings(model="fake-vlm", grader="fake-judge", models_config=config)
        )
        all_calls = len(store.cache)
        sent_after = len(server.requests)
    # the rerun asked exactly for the calls that had not finished: none was repeated
    assert sent_after == all_calls - finished_calls
    assert outcome.incomplete == 0 and len(outcome.scores) == 6
    assert outcome.verdicts.skipped == done_before
    assert _count(db, stages.EVAL_VERDICT) == total_verdicts


def test_units_waiting_ahead_never_exceed_the_configured_calls_in_flight(tmp_path: Path) -> None:
    """``run_units`` starts more units than a model's ``concurrency`` (they wait with their
    requests built); the server still never sees more than ``concurrency`` at once."""
    with RunStore(tmp_path / "run") as store:
        fill_store(store, demo_instances(6))
        with FakeOpenAIServer(responder, latency_s=0.05) as server:
            config = models_yaml(tmp_path, server)
            data = yaml.safe_load(config.read_text(encoding="utf-8"))
            for entry in data["models"]:
                entry["concurrency"] = 4  # units_ahead(4) == 1: five units at once
            config.write_text(yaml.safe_dump(data), encoding="utf-8")
            outcome = run_evaluation(
                store, EvalSettings(model="fake-vlm", grader="fake-judge", models_config=config)
            )
        assert outcome.incomplete == 0 and len(outcome.scores) == 6
        assert server.peak_concurrency <= 4
