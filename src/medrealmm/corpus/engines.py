"""Where the per-consultation screening runs: local processes (default) or Ray Data (the
engines of ``medrealmm.engines``).

Both engines run the same ``screen_shard`` over the same shard plan and stream rows in line
order (a bounded window of shards in flight), so their output is identical and the driver
holds a few shards' rows at a time; only throughput and where the work runs differ.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any

import pyarrow as pa

from medrealmm.corpus.config import CompletenessConfig
from medrealmm.corpus.screen import ScreenRow, Shard, screen_shard
from medrealmm.engines import Engine, default_workers, process_pool, ray_session

Progress = Callable[[int], None]

SCREEN_SCHEMA = pa.schema(
    [
        ("line", pa.int64()),
        ("id", pa.string()),
        ("department", pa.string()),
        ("drop", pa.string()),
        ("record", pa.string()),
        ("error", pa.string()),
    ]
)


def iter_screen(
    shards: Sequence[Shard],
    config: CompletenessConfig,
    *,
    engine: Engine = Engine.LOCAL,
    workers: int | None = None,
    progress: Progress | None = None,
) -> Iterator[ScreenRow]:
    """Every row of the shards, in line order, as the shards finish."""
    workers = workers or default_workers()
    advance = progress or (lambda n: None)
    runner = _run_ray if engine is Engine.RAY else _run_local
    for batch in runner(shards, config, workers):
        yield from batch
        advance(len(batch))


def run_screen(
    shards: Sequence[Shard],
    config: CompletenessConfig,
    *,
    engine: Engine = Engine.LOCAL,
    workers: int | None = None,
    progress: Progress | None = None,
) -> list[ScreenRow]:
    """``iter_screen`` as one list (small inputs, tests and the engines benchmark)."""
    rows = list(iter_screen(shards, config, engine=engine, workers=workers, progress=progress))
    rows.sort(key=lambda row: row["line"])
    return rows


def _run_local(
    shards: Sequence[Shard], config: CompletenessConfig, workers: int
) -> Iterator[list[ScreenRow]]:
    if workers == 1 or len(shards) <= 1:
        for shard in shards:
            yield screen_shard(shard, config)
        return
    window: deque[Future[list[ScreenRow]]] = deque()
    with process_pool(min(workers, len(shards))) as pool:
        for shard in shards:  # a bounded window keeps memory flat on huge inputs
            window.append(pool.submit(screen_shard, shard, config))
            if len(window) >= 2 * workers:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()


def _run_ray(
    shards: Sequence[Shard], config: CompletenessConfig, workers: int
) -> Iterator[list[ScreenRow]]:
    quiet = logging.getLogger("ray.data")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # our own progress bar reports; Ray's INFO lines are noise
    try:
        with ray_session(workers, needs="ray[data]"):
            from ray import data as ray_data

            context = ray_data.DataContext.get_current()
            context.enable_progress_bars = False
            context.execution_options.preserve_order = True  # rows stream in line order
            dataset = ray_data.from_items(
                [shard.as_row() for shard in shards], override_num_blocks=max(1, len(shards))
            ).map_batches(_RayScreen(config), batch_size=1, batch_format="pyarrow")
            for table in dataset.iter_batches(batch_size=None, batch_format="pyarrow"):
                yield [_as_screen_row(item) for item in table.to_pylist()]
    finally:
        quiet.setLevel(level)


class _RayScreen:
    """A picklable callable: each Ray task screens its shards into one columnar table."""

    def __init__(self, config: CompletenessConfig) -> None:
        self.config_json = config.model_dump_json()

    def __call__(self, batch: pa.Table) -> pa.Table:
        config = CompletenessConfig.model_validate_json(self.config_json)
        rows = [
            r for shard in batch.to_pylist() for r in screen_shard(Shard.from_row(shard), config)
        ]
        return pa.Table.from_pylist([dict(r) for r in rows], schema=SCREEN_SCHEMA)


def _as_screen_row(item: dict[str, Any]) -> ScreenRow:
    return ScreenRow(
        line=int(item["line"]),
        id=str(item["id"]),
        department=str(item["department"]),
        drop=str(item["drop"]),
        record=str(item["record"]),
        error=str(item["error"]),
    )
