"""Offloading per-unit work: the same answers from a thread, a process pool and Ray."""

from __future__ import annotations

import asyncio
import os

import pytest

from medrealmm.engines import Engine, offload


def square_with_pid(n: int) -> tuple[int, int]:
    return n * n, os.getpid()


async def _all(pool, n: int) -> list[tuple[int, int]]:  # type: ignore[no-untyped-def]
    return list(await asyncio.gather(*(pool(square_with_pid, i) for i in range(n))))


def test_one_worker_stays_in_this_process_and_more_use_processes() -> None:
    with offload(Engine.LOCAL, 1) as pool:
        here = asyncio.run(_all(pool, 4))
    assert {pid for _, pid in here} == {os.getpid()}
    with offload(Engine.LOCAL, 2) as pool:
        there = asyncio.run(_all(pool, 8))
    assert [v for v, _ in there] == [v for v, _ in here] + [16, 25, 36, 49]
    assert os.getpid() not in {pid for _, pid in there}


@pytest.mark.slow
def test_ray_gives_the_same_answers() -> None:
    pytest.importorskip("ray")
    with offload(Engine.RAY, 2) as pool:
        values = asyncio.run(_all(pool, 4))
    assert [v for v, _ in values] == [0, 1, 4, 9]
