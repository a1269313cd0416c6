"""The contamination check: the evaluated model is asked to complete the release's canary,
and its answer goes into the evaluation's spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.evaluate.canary import completes, split_canary
from medrealmm.evaluate.provenance import load_specs
from medrealmm.release.layout import canary
from medrealmm.store import RunStore
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import INFO, REPLY, accept


def test_the_shown_start_never_holds_the_rest() -> None:
    full = canary("medrealmm-test")
    shown, rest = split_canary(full)
    assert shown + rest == full and len(rest) >= 28 and rest not in shown
    assert completes(f"好的：{rest.upper()}", rest) and not completes("不知道", rest)


@pytest.mark.parametrize("seen", [True, False])
def test_the_spec_records_whether_the_model_completed_the_canary(
    release: Path, tmp_path: Path, seen: bool
) -> None:
    accept(release)
    rest = split_canary(canary(INFO.name))[1]

    def answer(body: dict[str, Any]) -> FakeReply:
        if "CANARY" in str(body["messages"]):
            return FakeReply(content=rest if seen else "不知道")
        return FakeReply(content=REPLY)

    with FakeOpenAIServer(answer) as server:
        entry = {"name": "fake-vlm", "model": "fake-vlm", "base_url": server.base_url}
        models = tmp_path / "models.yaml"
        models.write_text(yaml.safe_dump({"models": [entry]}), encoding="utf-8")
        args = ["--out", str(tmp_path / "results"), "--model", "fake-vlm"]
        run = CliRunner().invoke(
            app, ["eval", "run", str(release), *args, "--models-config", str(models)]
        )
        assert run.exit_code == 0, run.output
    with RunStore(tmp_path / "results") as store:
        (spec,) = [s for s in load_specs(store).values() if s.label == "fake-vlm"]
    assert spec.contamination is not None and spec.contamination.completed is seen
    assert spec.contamination.prefix.startswith("MEDREALMM CANARY GUID ")
