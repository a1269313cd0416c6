"""Cache entries and usage written in an event loop commit with the unit's row, and never later
than the next loop step: what a kill leaves is what it left when each committed at once."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from medrealmm.llm.types import Completion, Usage
from medrealmm.schema import Verdict
from medrealmm.store import RunStore, stages

REPLY = Completion(text='{"met": true}', model="m", usage=Usage(prompt_tokens=3))
VERDICT = Verdict(criterion_id="c1", value=True)


def _committed(store: RunStore, table: str) -> int:
    """Rows another connection sees: what a kill at this moment would leave."""
    with sqlite3.connect(store.path, timeout=5) as other:
        return int(other.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def _finish_call(store: RunStore, n: int) -> None:
    """What a graded criterion writes once its call is back: cache entry, usage, verdict."""
    store.cache.put(f"key{n}", "evaluate.grader", "judge", REPLY)
    store.record_calls(stages.EVAL_VERDICT, "judge", [REPLY])
    store.put(stages.EVAL_VERDICT, f"v{n}", VERDICT)


def test_outside_a_loop_every_write_commits_at_once(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run") as store:
        store.cache.put("key", "evaluate.grader", "judge", REPLY)
        assert _committed(store, "llm_cache") == 1
        store.record_calls(stages.EVAL_VERDICT, "judge", [REPLY])
        assert _committed(store, "usage") == 1


async def test_the_units_row_commits_its_cache_entry_and_usage(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run") as store:
        store.cache.put("key", "evaluate.grader", "judge", REPLY)
        store.record_calls(stages.EVAL_VERDICT, "judge", [REPLY])
        assert store.cache.get("key") is not None  # its own connection reads it at once
        store.put(stages.EVAL_VERDICT, "v", VERDICT)
        assert (_committed(store, "llm_cache"), _committed(store, "usage")) == (1, 1)


async def test_a_write_with_no_row_after_it_commits_by_the_next_step(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run") as store:
        store.cache.put("key", "evaluate.grader", "judge", REPLY)
        await asyncio.sleep(0)  # the loop's next step: nothing waits on the network uncommitted
        assert _committed(store, "llm_cache") == 1


async def test_a_failed_row_keeps_the_cache_entry_of_its_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with RunStore(tmp_path / "run") as store:
        store.cache.put("key", "evaluate.grader", "judge", REPLY)

        def broken(*args: object) -> None:
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr(store, "_link", broken)
        with pytest.raises(sqlite3.OperationalError):
            store.put(stages.EVAL_VERDICT, "v", VERDICT, sources=[("x", "y")])
        await asyncio.sleep(0)
        assert _committed(store, "llm_cache") == 1  # the finished call is not asked again
        assert _committed(store, "records") == 0  # the failed row left nothing


async def test_cancelled_after_n_units_leaves_all_n_committed(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run") as store:
        in_flight = asyncio.Event()  # never set: units 10-39 are still waiting at the kill

        async def unit(n: int) -> None:
            if n < 10:
                await asyncio.sleep(0.001 * n)  # the call
            else:
                await in_flight.wait()  # not by timing: a loaded host once let all 40 finish
            _finish_call(store, n)

        tasks = [asyncio.create_task(unit(n)) for n in range(40)]
        while store.count(stages.EVAL_VERDICT) < 10:
            await asyncio.sleep(0.001)
        for task in tasks:
            task.cancel()  # as a kill cuts off every call in flight
        await asyncio.gather(*tasks, return_exceptions=True)
        done = store.count(stages.EVAL_VERDICT)
        assert 10 <= done < 40
        assert _committed(store, "records") == done
        assert _committed(store, "llm_cache") == done == len(store.cache)
        usage = store.usage()[0]
        assert usage["calls"] == done


def test_close_commits_what_is_pending(tmp_path: Path) -> None:
    async def write(store: RunStore) -> None:
        store.cache.put("key", "evaluate.grader", "judge", REPLY)
        asyncio.get_running_loop().stop()  # the loop ends before its queued commit runs

    store = RunStore(tmp_path / "run")
    loop = asyncio.new_event_loop()
    loop.run_until_complete(write(store))
    loop.close()
    assert _committed(store, "llm_cache") == 0
    store.close()
    with RunStore(tmp_path / "run") as reopened:
        assert len(reopened.cache) == 1
