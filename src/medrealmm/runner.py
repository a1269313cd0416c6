"""Run many independent units of async work with a bound, a progress bar and resumability.

Callers pass only the keys not yet done (``RunStore.keys``) and persist each unit's result
inside ``work``; a killed run therefore loses at most the units in flight.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from medrealmm.io.diskfull import is_disk_full

T = TypeVar("T")


def run_async(work: Awaitable[T]) -> T:
    """``asyncio.run(work)``, except that the result never sits on the event loop's main task.

    On the way out, ``asyncio.run`` looks up its SIGINT handler (which holds the main task)
    with ``signal.getsignal``; Python's enum lookup there formats ``repr(handler)``, and so
    the task with its result. For a run's outcome (every case score) that repr cost a tenth
    of a second per thousand cases, once per run, for nothing.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await work)

    asyncio.run(main())
    return box[0]


#: "0" turns progress bars off (tests, benchmarks, ``--quiet``).
PROGRESS_ENV = "MEDREALMM_PROGRESS"


def progress_enabled() -> bool:
    return os.environ.get(PROGRESS_ENV, "1") != "0"


def make_progress() -> Progress:
    """A progress bar on stderr: stdout carries only results."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not progress_enabled(),
    )


@dataclass
class RunStats:
    done: int = 0
    failed: int = 0
    skipped: int = 0
    errors: dict[str, str] = field(default_factory=dict)


def units_ahead(concurrency: int) -> int:
    """Units to hold ready beyond a client's ``concurrency`` slots (``run_units``' ``ahead``):
    a quarter. More showed no further gain at 64 slots, and each holds its built request,
    images included."""
    return concurrency // 4


async def run_units(
    keys: Sequence[str] | Iterable[str],
    work: Callable[[str], Awaitable[None]],
    *,
    description: str,
    concurrency: int = 16,
    already_done: int = 0,
    ahead: int = 0,
    total: int | None = None,
) -> RunStats:
    """Await ``work(key)`` for each key, at most ``concurrency + ahead`` at once.

    ``keys`` may be a stream (a corpus too big to list) when ``total`` says how many it yields.

    ``ahead``: units beyond the ``concurrency`` that a client admits (an LLM client holds
    its own semaphore of that size). They wait at that semaphore with their request built,
    so a slot freed by a reply is refilled at once, not after the reply is processed and the
    next request made: when replies arrive together, the slot otherwise idles for the
    processing of every reply ahead of it (``benchmarks/eval_throughput.py``).

    An exception in one unit is recorded against its key and never stops the others.
    """
    stats = RunStats(skipped=already_done)
    pending = iter(keys)
    with make_progress() as progress:
        if total is None:
            total = len(keys)  # type: ignore[arg-type]
        task = progress.add_task(description, total=total + already_done)
        progress.advance(task, already_done)

        async def worker() -> None:
            # The workers take the keys in order: one task per slot, not one per key waiting
            # on a semaphore (a grading run has tens of thousands of keys).
            for key in pending:
                try:
                    await work(key)
                    stats.done += 1
                except Exception as exc:  # one bad unit must not sink the run
                    if is_disk_full(exc):
                        raise  # ...but a full disk sinks every unit after it: stop, say where
                    stats.failed += 1
                    stats.errors[key] = f"{type(exc).__name__}: {exc}"
                finally:
                    progress.advance(task)

        workers = max(1, min(concurrency + ahead, total))
        await asyncio.gather(*(worker() for _ in range(workers)))
    return stats
