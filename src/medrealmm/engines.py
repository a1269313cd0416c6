"""Where per-consultation work runs: in this process, a local process pool, or Ray.

``corpus build`` screens on these engines (``corpus/engines.py``); CPU-heavy per-unit calls of
other stages (image de-identification: OCR and face detection) go through ``offload``, so a
stage stays one async loop that commits each unit as it finishes, whichever engine computes.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from enum import StrEnum
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Engine(StrEnum):
    LOCAL = "local"
    RAY = "ray"


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int) -> None:
    """Pool initializer: end this worker when the process that started it ends.

    A worker that outlived a ``kill -9`` of its run would go on burning CPU on work nobody
    collects. On Linux the kernel sends SIGKILL when the parent dies (``PR_SET_PDEATHSIG``);
    everywhere a daemon thread also watches the parent pid, which covers other systems.
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the thread still watches
            pass
    if os.getppid() != parent:  # died before the signal was armed
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def process_pool(workers: int) -> ProcessPoolExecutor:
    """The one way to start local worker processes: they die with this process."""
    return ProcessPoolExecutor(
        max_workers=workers, initializer=die_with_parent, initargs=(os.getpid(),)
    )


class Offload(Protocol):
    """``await offload(fn, *args)``: run a picklable top-level function on the engine."""

    workers: int

    async def __call__(self, fn: Callable[..., T], *args: Any) -> T: ...


class _Threads:
    def __init__(self) -> None:
        self.workers = 1

    async def __call__(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.to_thread(fn, *args)


class _Processes:
    def __init__(self, pool: ProcessPoolExecutor, workers: int) -> None:
        self.pool, self.workers = pool, workers

    async def __call__(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)


class _Ray:
    def __init__(self, workers: int) -> None:
        import ray

        self.ray, self.workers = ray, workers
        self._remote: dict[Callable[..., Any], Any] = {}

    async def __call__(self, fn: Callable[..., T], *args: Any) -> T:
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self.ray.remote(fn)
        return await remote.remote(*args)  # type: ignore[no-any-return]


@contextmanager
def offload(engine: Engine = Engine.LOCAL, workers: int | None = 1) -> Iterator[Offload]:
    """One worker: a thread of this process. More: a local process pool, or Ray tasks."""
    workers = workers or default_workers()
    if engine is Engine.RAY:
        yield from _ray(workers)
    elif workers == 1:
        yield _Threads()
    else:
        with process_pool(workers) as pool:
            yield _Processes(pool, workers)


@contextmanager
def ray_session(workers: int, *, needs: str = "ray[data]") -> Iterator[Any]:
    """The ``ray`` module, initialised for ``workers`` CPUs; shut down after only if started here.

    One start-up rule for every Ray user (image offload, corpus screening): a caller that already
    runs inside a Ray cluster keeps it.
    """
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - ray is an optional extra
        raise ValueError(f"--engine ray needs Ray: pip install '{needs}'") from exc
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(
            num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False
        )
    try:
        yield ray
    finally:
        if started_here:
            ray.shutdown()


def _ray(workers: int) -> Iterator[Offload]:
    with ray_session(workers):
        yield _Ray(workers)
