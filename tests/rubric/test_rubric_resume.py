"""kill -9 a running rubric generation, rerun it, and check no finished call is asked again."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import medrealmm
from medrealmm.llm import build_client, load_model_specs
from medrealmm.rubric import RubricSettings
from medrealmm.rubric.stage import generate_all
from medrealmm.schema import Instance
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

REPLY = json.dumps({"criteria": [{"text": "给出初步判断并说明依据", "weight": 6}] * 2})


def _done(db: Path) -> int:
    with sqlite3.connect(db, timeout=5) as conn:
        query = "SELECT COUNT(*) FROM records WHERE stage=? AND status='done'"
        return int(conn.execute(query, (stages.RUBRIC_ROUND,)).fetchone()[0])


@pytest.mark.slow
async def test_kill_9_then_rerun_repeats_no_finished_call(
    tmp_path: Path, demo_instances: list[Instance], demo_dir: Path
) -> None:
    run = tmp_path / "run"
    instances = demo_instances[:8]
    with RunStore(run) as store:
        store.put_many(stages.MCCP_INSTANCE, ((i.id, i) for i in instances))
        store.set_meta(stages.image_root_key(stages.MCCP_INSTANCE), str(demo_dir))
        db = store.path
    with FakeOpenAIServer(lambda body: FakeReply(content=REPLY), latency_s=0.15) as server:
        config = tmp_path / "models.yaml"
        config.write_text(
            f"models:\n  - name: fake\n    model: fake\n    base_url: {server.base_url}\n",
            encoding="utf-8",
        )
        env = dict(os.environ, MEDREALMM_PROGRESS="0")
        src = str(Path(medrealmm.__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
        command = [
            sys.executable,
            "-c",
            "from medrealmm.cli import main; main()",
            *("rubric", "generate", str(run), "--model", "fake", "--models-config", str(config)),
            *("--concurrency", "1"),
        ]
        child = subprocess.Popen(command, env=env)
        deadline = time.monotonic() + 120
        while _done(db) < 3:
            assert child.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait()
        done_before = _done(db)
        assert 0 < done_before < len(instances)
        with RunStore(run) as store:
            finished_calls = len(store.cache)
            sent_before = len(server.requests)
            client = build_client(load_model_specs(config)["fake"], cache=store.cache)
            stats = await generate_all(store, client, RubricSettings())
            all_calls = len(store.cache)
            sent_after = len(server.requests) - sent_before
    assert sent_after == all_calls - finished_calls  # only unfinished calls were asked
    assert stats.skipped == done_before and stats.done == len(instances) - done_before
    assert _done(db) == len(instances)
