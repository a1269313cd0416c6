"""One writer per run store: a second process is refused with the holder named."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.store import RunStore
from medrealmm.store.lock import StoreLockedError

HOLD = (
    "import sys, time; from medrealmm.store import RunStore; "
    "s = RunStore(sys.argv[1], writer=True); print('held', flush=True); time.sleep(60)"
)


@pytest.fixture()
def held(tmp_path: Path):  # type: ignore[no-untyped-def]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def test_a_second_writer_is_refused_with_the_holder_named(tmp_path: Path, held) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(StoreLockedError, match=rf"in use by pid {held.pid} on .+ since "):
        RunStore(tmp_path, writer=True)
    with RunStore(tmp_path) as reader:  # reading (the review app, reports) is not blocked
        assert reader.stages() == {}
    result = CliRunner().invoke(app, ["deid", "run", str(tmp_path), "--no-llm"])
    assert result.exit_code == 2 and f"pid {held.pid}" in result.output


def test_the_lock_goes_with_its_holder(tmp_path: Path, held) -> None:  # type: ignore[no-untyped-def]
    held.kill()
    held.wait()  # even a kill -9 leaves no stale lock
    with RunStore(tmp_path, writer=True), RunStore(tmp_path, writer=True):  # re-entrant here
        pass
    with RunStore(tmp_path, writer=True):
        pass
