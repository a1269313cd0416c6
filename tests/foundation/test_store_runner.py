"""Run store semantics that resumability rests on, and the bounded runner."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

import pytest

from medrealmm.llm import CachedClient, ChatRequest, Completion, LLMCache, Message, Usage
from medrealmm.runner import run_async, run_units
from medrealmm.schema import Consultation, Event, Sender
from medrealmm.store import FAILED, RunStore


def _c(i: int) -> Consultation:
    event = Event(sender=Sender.PATIENT, timestamp=datetime(2025, 1, 1), content=f"{i}")
    return Consultation(id=f"c{i:02d}", department="儿科", events=[event])


def test_records_survive_reopening_and_done_keys_drive_resume(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        store.put_many("raw", ((c.id, c) for c in map(_c, range(3))))
        store.put("stage", "c00", _c(0))
        store.put("stage", "c01", None, status=FAILED, error="bad output")
    with RunStore(tmp_path / "store.sqlite") as store:
        assert store.keys("raw") == {"c00", "c01", "c02"}
        assert store.keys("stage") == {"c00"}  # failures are not 'done'
        assert store.failures("stage") == {"c01": "bad output"}
        assert [c.id for c in store.iter("raw", Consultation)] == ["c00", "c01", "c02"]
        assert store.get("raw", "c02", Consultation) == _c(2)
        assert store.get("raw", "missing", Consultation) is None
        assert store.stages() == {"raw": 3, "stage": 2}


def test_usage_accounting_counts_cached_calls_without_tokens(tmp_path: Path) -> None:
    fresh = Completion(text="x", model="m", usage=Usage(prompt_tokens=10, completion_tokens=3))
    with RunStore(tmp_path) as store:
        store.record_calls("grade", "m", [fresh, fresh.model_copy(update={"cached": True})])
        (row,) = store.usage()
    assert row == {
        "stage": "grade",
        "model": "m",
        "calls": 2,
        "cached_calls": 1,
        "prompt_tokens": 10,
        "completion_tokens": 3,
        "failed_calls": 0,
        "attempts": 1,
        "unknown_prompt_calls": 0,
    }


def test_usage_counts_failed_calls_and_requests(tmp_path: Path) -> None:
    retried = Completion(text="x", model="m", attempts=3)
    with RunStore(tmp_path) as store:
        store.record_calls("grade", "m", [retried], failed_attempts=5)
        (row,) = store.usage()
    assert (row["calls"], row["failed_calls"], row["attempts"]) == (2, 1, 8)


def test_usage_columns_added_to_a_store_written_before_them(tmp_path: Path) -> None:
    import sqlite3

    db = sqlite3.connect(tmp_path / "store.sqlite")
    db.execute(
        "CREATE TABLE usage (stage TEXT NOT NULL, model TEXT NOT NULL, calls INTEGER NOT NULL"
        " DEFAULT 0, cached_calls INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL"
        " DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (stage, model))"
    )
    db.execute("INSERT INTO usage VALUES ('grade', 'm', 4, 1, 40, 8)")
    db.commit()
    db.close()
    with RunStore(tmp_path) as store:
        store.record_calls("grade", "m", failed_attempts=2)
        (row,) = store.usage()
    assert (row["calls"], row["prompt_tokens"], row["failed_calls"], row["attempts"]) == (
        5,
        40,
        1,
        2,
    )


def test_meta_round_trip(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        store.set_meta("image_root:raw", "/data/x")
        assert store.get_meta("image_root:raw") == "/data/x"
        assert store.get_meta("absent", 5) == 5


async def test_runner_bounds_concurrency_and_isolates_failures() -> None:
    active = peak = 0
    seen: list[str] = []

    async def work(key: str) -> None:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01)
        active -= 1
        if key == "k3":
            raise RuntimeError("boom")
        seen.append(key)

    stats = await run_units([f"k{i}" for i in range(10)], work, description="t", concurrency=3)
    assert peak <= 3
    assert stats.done == 9 and stats.failed == 1 and "boom" in stats.errors["k3"]
    assert sorted(seen) == sorted(f"k{i}" for i in range(10) if i != 3)


async def test_units_ahead_refill_the_slots_a_burst_of_replies_freed_before_processing_it(
    tmp_path: Path,
) -> None:
    """Two slots, two units ahead, two replies arriving in one loop step: both waiting units
    send before either reply is processed, so no slot idles through that processing."""
    events: list[str] = []
    slots = asyncio.Semaphore(2)  # the client's own bound, as OpenAICompatibleClient holds
    waves = [asyncio.Event(), asyncio.Event()]

    class TwoSlots:
        name, is_baseline, vision, reads_pixels = "two-slots", False, False, True

        def cache_identity(self, request: ChatRequest) -> str:
            return self.name

        async def complete(self, request: ChatRequest) -> Completion:
            n = int(request.inputs["n"])
            async with slots:
                events.append(f"sent {n}")
                if n % 2:  # the wave's second request: both its replies then come together
                    asyncio.get_running_loop().call_soon(waves[n // 2].set)
                await waves[n // 2].wait()
            return Completion(text="{}", model="m")

        def forget(self, request: ChatRequest) -> None: ...

        async def aclose(self) -> None: ...

    cache = LLMCache(tmp_path / "cache.sqlite")
    client = CachedClient(TwoSlots(), cache)

    async def work(key: str) -> None:
        await client.complete(
            ChatRequest(task="t", messages=[Message.text("user", key)], inputs={"n": key})
        )
        events.append(f"processed {key}")

    keys = ["0", "1", "2", "3"]
    stats = await run_units(keys, work, description="t", concurrency=2, ahead=2)
    cache.close()
    assert stats.done == 4
    assert events[:4] == ["sent 0", "sent 1", "sent 2", "sent 3"]
    assert events[4:6] == ["processed 0", "processed 1"]


async def test_runner_takes_keys_in_order_and_handles_none() -> None:
    started: list[str] = []

    async def work(key: str) -> None:
        started.append(key)
        await asyncio.sleep(0)

    keys = [f"k{i}" for i in range(7)]
    stats = await run_units(keys, work, description="t", concurrency=2)
    assert started == keys and stats.done == 7  # workers pull the keys in the order given
    assert (await run_units([], work, description="t")).done == 0


def test_run_async_returns_the_result_and_raises_what_the_work_raised() -> None:
    async def answer() -> dict[str, int]:
        return {"cases": 3}

    async def broken() -> None:
        raise ValueError("bad input")

    assert run_async(answer()) == {"cases": 3}
    with pytest.raises(ValueError, match="bad input"):
        run_async(broken())


async def test_a_call_cancelled_while_its_reply_waits_is_still_cached(tmp_path: Path) -> None:
    """The turn a finished call yields (for units ahead) is no window for a rerun to repeat it."""

    class Answers:
        name, is_baseline, vision, reads_pixels = "answers", False, False, True

        def cache_identity(self, request: ChatRequest) -> str:
            return self.name

        async def complete(self, request: ChatRequest) -> Completion:
            return Completion(text="{}", model="m")

        def forget(self, request: ChatRequest) -> None: ...

        async def aclose(self) -> None: ...

    cache = LLMCache(tmp_path / "cache.sqlite")
    client = CachedClient(Answers(), cache)
    task = asyncio.create_task(
        client.complete(ChatRequest(task="t", messages=[Message.text("user", "x")]))
    )
    await asyncio.sleep(0)  # the call returned; the client now yields its one turn
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(cache) == 1
    cache.close()
