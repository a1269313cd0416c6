"""``corpus build``: C0 -Φimg-> C1 -Φcmpl-> C2 -Φbal-> C3 -4a-> C3', written to the run store
(stages ``corpus.sampled`` and ``corpus.dropped``) and to three files beside it.

The screening is a pure map (any engine) streamed in line order into a scratch pool on disk
(``corpus.pool``); balancing reads department counts and then each department's ids back from
it, and every later stage streams from it too, so memory stays flat whatever the input's size.
The 4a agent is resumable per case in the store, and its calls are cached.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, TypeVar

from pydantic import BaseModel

from medrealmm.corpus.balance import COPY_MARK, Pick, balance_cap, balance_stream
from medrealmm.corpus.config import CorpusConfig
from medrealmm.corpus.engines import Engine, iter_screen
from medrealmm.corpus.filters import privacy_rule
from medrealmm.corpus.manifest import Manifest, department_table, stage_counts
from medrealmm.corpus.pool import CorpusPool, open_pool
from medrealmm.corpus.privacy_agent import PrivacyScreen, screen_privacy
from medrealmm.corpus.reasons import Drop, DropReason
from medrealmm.corpus.screen import ScreenRow, plan_shards
from medrealmm.io import atomic_writer
from medrealmm.io.dataset import check_dataset, check_shrink
from medrealmm.io.jsonl import dump_line
from medrealmm.llm import LLMClient, ModelSpec, guard_unmasked, resolve_spec, send_pixels
from medrealmm.llm.session import open_client, run_with_client
from medrealmm.runner import make_progress, run_units
from medrealmm.schema import Consultation
from medrealmm.store import FAILED, RunStore, stages
from medrealmm.store.keys import usage_label

SAMPLED_FILE = "corpus.sampled.jsonl"
DROPPED_FILE = "corpus.dropped.jsonl"
MANIFEST_FILE = "manifest.json"
MANIFEST_META = stages.CORPUS_MANIFEST_META
_BATCH = 2000  # rows a stage hands the pool at once
R = TypeVar("R", bound=BaseModel)


def materialize(pick: Pick, record: str) -> Consultation:
    consultation = Consultation.model_validate_json(record)
    if not pick.is_copy:
        return consultation
    meta = {**consultation.meta, "duplicate_of": pick.source_id}
    return consultation.model_copy(update={"id": pick.id, "meta": meta})


async def screen_with_agent(
    store: RunStore,
    client: LLMClient,
    todo: Iterable[tuple[str, Consultation]],
    total: int,
    already_done: int,
    image_root: Path | None = None,
) -> None:
    """Run the 4a agent on ``todo`` (source id, case), a stream of ``total`` cases, recording
    each verdict (``None`` with its error on failure) in the store as it comes."""
    cases: dict[str, Consultation] = {}  # only the units in flight

    def keys() -> Iterator[str]:
        for key, case in todo:
            cases[key] = case
            yield key

    async def work(key: str) -> None:
        case = cases.pop(key)
        try:
            result = await screen_privacy(client, case, image_root)
        except Exception as exc:  # e.g. a missing image: recorded, retried next run
            store.put(stages.CORPUS_PRIVACY, key, None, status=FAILED, error=_error(exc))
            return
        store.record_calls(
            usage_label(stages.CORPUS_PRIVACY),
            client.name,
            result.completions,
            result.failed_attempts,
        )
        if result.value is None:
            store.put(stages.CORPUS_PRIVACY, key, None, status=FAILED, error=result.error)
        else:
            store.put(stages.CORPUS_PRIVACY, key, result.value)

    await run_units(
        keys(), work, description="4a privacy screen", already_done=already_done, total=total
    )


def _error(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"  # as ``run_units`` records a unit's exception


def build_corpus(
    input_path: Path | str,
    out: Path | str,
    config: CorpusConfig | None = None,
    *,
    engine: Engine = Engine.LOCAL,
    workers: int | None = None,
    models_config: Path | str | None = None,
    store: RunStore | None = None,
    limit: int | None = None,
    allow_shrink: bool = False,
    validate: bool = True,
) -> Manifest:
    """Build the corpus from ``input_path`` into the run at ``out``.

    ``validate``: check the input as ``medrealmm validate`` does and guard against a shrink
    (``allow_shrink``) before anything is written; the chain passes False, its ingest step
    did both on the same file."""
    input_path, out = Path(input_path), Path(out)
    config = config or CorpusConfig()
    if not input_path.is_file():
        raise FileNotFoundError(f"input corpus not found: {input_path}")
    incoming = check_dataset(input_path, limit=limit).ids if validate else None
    # Resolve and check the screening agent's endpoint before any work or store change.
    spec = (
        None if config.privacy.model is None else resolve_spec(config.privacy.model, models_config)
    )
    if spec is not None:
        guard_unmasked(spec, "corpus stage 4a privacy screen")
    owned = store is None
    store = store or RunStore(out, writer=True)
    try:
        if incoming is not None:
            check_shrink(out, _built_sources(store), incoming, allow=allow_shrink)
        return _build(input_path, out, config, engine, workers, spec, store, limit)
    finally:
        if owned:
            store.close()


def _built_sources(store: RunStore) -> Iterator[str]:
    """The source id of every case the run's corpus holds (sampled or dropped), a page of
    keys at a time: a copy counts as its source."""
    for stage in (stages.CORPUS_SAMPLED, stages.CORPUS_DROPPED):
        for (key,) in store.fields(stage, ()):
            yield key.split(COPY_MARK)[0]


def _build(
    input_path: Path,
    out: Path,
    config: CorpusConfig,
    engine: Engine,
    workers: int | None,
    spec: ModelSpec | None,
    store: RunStore,
    limit: int | None = None,
) -> Manifest:
    """Every stage streams through a scratch pool on disk (``corpus.pool``): memory stays flat
    whatever the input's size."""
    with open_pool(out, input_path) as pool:
        pool.add_screened(_screen(input_path, config, engine, workers, limit))
        sizes = pool.department_sizes()
        cap = balance_cap(sizes.values(), config.balance)
        _balance(pool, sizes, cap, config)
        _privacy_rule(pool, config)
        backend: LLMClient | None = None
        if spec is not None and pool.count("rule_kept"):
            backend = open_client(spec, None, store.cache, meta=store)
            _privacy_agent(pool, store, backend, input_path)
        else:
            pool.keep_rule_kept()
        snapshots = {
            **pool.snapshots,
            "C3": pool.pick_departments(),
            "C3'": pool.survivor_departments(),
        }
        manifest = Manifest(
            input=input_path.name,
            config=config,
            privacy_backend=backend.name if backend else None,
            privacy_backend_is_baseline=backend is not None and backend.is_baseline,
            balance_cap=cap,
            stages=stage_counts(sum(pool.snapshots["C0"].values()), pool.drops(), pool.copies()),
            departments=department_table(snapshots),
        )
        _persist(store, out, input_path, pool, manifest)
    return manifest


def _balance(
    pool: CorpusPool, sizes: dict[str, int], cap: int | None, config: CorpusConfig
) -> None:
    picks: list[Pick] = []
    drops: list[Drop] = []
    for item in balance_stream(sizes, pool.department_ids, config.balance, cap):
        (picks if isinstance(item, Pick) else drops).append(item)  # type: ignore[arg-type]
        if len(picks) + len(drops) >= _BATCH:
            _flush_balance(pool, picks, drops)
    _flush_balance(pool, picks, drops)


def _flush_balance(pool: CorpusPool, picks: list[Pick], drops: list[Drop]) -> None:
    pool.add_picks(picks)
    pool.add_drops(drops)
    picks.clear()
    drops.clear()


def _privacy_rule(pool: CorpusPool, config: CorpusConfig) -> None:
    """The 4a rule over C3, in batches (its reads and writes are different tables)."""
    kept: list[str] = []
    drops: list[Drop] = []
    for pick, record in pool.picks():
        drop = privacy_rule(materialize(pick, record), config.privacy)
        if drop is None:
            kept.append(pick.id)
        else:
            drops.append(drop)
        if len(kept) + len(drops) >= _BATCH:
            _flush_rule(pool, kept, drops)
    _flush_rule(pool, kept, drops)


def _flush_rule(pool: CorpusPool, kept: list[str], drops: list[Drop]) -> None:
    pool.add_ids("rule_kept", kept)
    pool.add_drops(drops)
    kept.clear()
    drops.clear()


def _privacy_agent(pool: CorpusPool, store: RunStore, backend: LLMClient, input_path: Path) -> None:
    """Screen each source case of C3 once (copies share its verdict), skipping those a
    previous build screened; then keep the picks whose source the agent kept."""
    sources = 0
    for batch in _batched(pool.rule_kept_sources()):
        sources += len(batch)
        pool.add_ids("agent_todo", [k for k in batch if not _screened(store, k)])
    todo = pool.count("agent_todo")
    image_root = input_path.parent if send_pixels(backend, wanted=True) else None
    cases = ((key, Consultation.model_validate_json(record)) for key, record in pool.agent_todo())
    run_with_client(
        backend,
        lambda client: screen_with_agent(store, client, cases, todo, sources - todo, image_root),
    )
    kept: list[str] = []
    drops: list[Drop] = []
    for pick in pool.rule_kept():
        verdict = store.get(stages.CORPUS_PRIVACY, pick.source_id, PrivacyScreen)
        if verdict is None:
            reason, detail = DropReason.PRIVACY_SCREEN_FAILED, "agent failed; retried on rerun"
            drops.append(Drop.of(pick.id, pick.department, reason, detail))
        elif verdict.remove:
            reason, detail = DropReason.FACE_DEPENDENT, "agent: remove"
            drops.append(Drop.of(pick.id, pick.department, reason, detail))
        else:
            kept.append(pick.id)
        if len(kept) + len(drops) >= _BATCH:
            _flush_agent(pool, kept, drops)
    _flush_agent(pool, kept, drops)


def _flush_agent(pool: CorpusPool, kept: list[str], drops: list[Drop]) -> None:
    pool.add_ids("survivors", kept)
    pool.add_drops(drops)
    kept.clear()
    drops.clear()


def _screened(store: RunStore, key: str) -> bool:
    """Whether a previous build recorded a verdict (a recorded failure is tried again)."""
    return store.get(stages.CORPUS_PRIVACY, key, PrivacyScreen) is not None


def _batched(items: Iterable[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    for item in items:
        batch.append(item)
        if len(batch) >= _BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _screen(
    input_path: Path,
    config: CorpusConfig,
    engine: Engine,
    workers: int | None,
    limit: int | None = None,
) -> Iterator[ScreenRow]:
    """The screening's rows in line order, as its shards finish."""
    shards = plan_shards(input_path, limit=limit)
    with make_progress() as progress:
        total = sum(shard.lines for shard in shards)
        task = progress.add_task(f"screen lines ({engine.value})", total=total)
        advance: Callable[[int], None] = lambda n: progress.advance(task, n)  # noqa: E731
        yield from iter_screen(
            shards, config.completeness, engine=engine, workers=workers, progress=advance
        )
        progress.update(task, completed=total)  # blank lines yield no row


def _persist(
    store: RunStore, out: Path, input_path: Path, pool: CorpusPool, manifest: Manifest
) -> None:
    """Replace the corpus rows wholesale, in one transaction, so a rebuild with a new config
    leaves none stale and a killed rebuild leaves the old corpus whole. The JSONL files are
    written from the same streams, each line as its row goes in."""
    with atomic_writer(out / SAMPLED_FILE) as sampled, atomic_writer(out / DROPPED_FILE) as dropped:
        store.replace(
            {
                stages.CORPUS_SAMPLED: (
                    (case.id, case) for case in _written(sampled, _survivors(pool))
                ),
                stages.CORPUS_DROPPED: (
                    (drop.consultation_id, drop) for drop in _written(dropped, pool.drops())
                ),
            }
        )
    store.set_image_root(stages.CORPUS_SAMPLED, input_path.parent)
    store.set_meta(MANIFEST_META, manifest.model_dump(mode="json"))
    manifest.write(out / MANIFEST_FILE)


def _survivors(pool: CorpusPool) -> Iterator[Consultation]:
    for pick, record in pool.survivors():
        yield materialize(pick, record)


def _written(handle: IO[str], records: Iterable[R]) -> Iterator[R]:
    """Pass ``records`` on, writing each as a JSONL line first."""
    for record in records:
        handle.write(dump_line(record))
        yield record
