"""``corpus build``: C0 -Φimg-> C1 -Φcmpl-> C2 -Φbal-> C3 -4a-> C3', written to the run store
(stages ``corpus.sampled`` and ``corpus.dropped``) and to three files beside it.

The screening is a pure map (any engine); balancing needs the whole pool so it runs on the
driver; the 4a agent is resumable per case in the store, and its calls are cached.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from medrealmm.corpus.balance import COPY_MARK, Pick, balance
from medrealmm.corpus.config import CorpusConfig
from medrealmm.corpus.engines import Engine, run_screen
from medrealmm.corpus.filters import privacy_rule
from medrealmm.corpus.manifest import Manifest, department_table, stage_counts
from medrealmm.corpus.privacy_agent import PrivacyScreen, screen_privacy
from medrealmm.corpus.reasons import Drop, DropReason, Operator
from medrealmm.corpus.screen import ScreenRow, plan_shards, row_error
from medrealmm.io import write_jsonl
from medrealmm.io.dataset import check_dataset, check_shrink
from medrealmm.io.errors import duplicate_id
from medrealmm.llm import LLMClient, ModelSpec, guard_unmasked, resolve_spec, send_pixels
from medrealmm.llm.session import open_client, run_with_client
from medrealmm.runner import make_progress, run_units
from medrealmm.schema import Consultation
from medrealmm.store import FAILED, RunStore, stages
from medrealmm.store.derived import remove_derived
from medrealmm.store.keys import usage_label

SAMPLED_FILE = "corpus.sampled.jsonl"
DROPPED_FILE = "corpus.dropped.jsonl"
MANIFEST_FILE = "manifest.json"
MANIFEST_META = stages.CORPUS_MANIFEST_META


@dataclass
class Screened:
    """What the screening map left: survivors as canonical JSON, drops, department counts."""

    kept: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (department, json)
    drops: list[Drop] = field(default_factory=list)
    snapshots: dict[str, Counter[str]] = field(default_factory=dict)


def collect(path: Path, rows: list[ScreenRow]) -> Screened:
    """Raise the first bad line; reject duplicate ids; tally what reached C0, C1, C2."""
    result = Screened(snapshots={"C0": Counter(), "C1": Counter(), "C2": Counter()})
    first_line: dict[str, int] = {}
    for row in rows:
        if row["error"]:
            raise row_error(str(path), row)
        if row["id"] in first_line:
            raise duplicate_id(path, row["line"], row["id"], first_line[row["id"]])
        first_line[row["id"]] = row["line"]
        department = row["department"]
        result.snapshots["C0"][department] += 1
        if row["drop"]:
            drop = Drop.model_validate_json(row["drop"])
            result.drops.append(drop)
            if drop.operator is Operator.IMAGE:
                continue
        else:
            result.kept[row["id"]] = (department, row["record"])
        result.snapshots["C1"][department] += 1
        if not row["drop"]:
            result.snapshots["C2"][department] += 1
    return result


def materialize(pick: Pick, record: str) -> Consultation:
    consultation = Consultation.model_validate_json(record)
    if not pick.is_copy:
        return consultation
    meta = {**consultation.meta, "duplicate_of": pick.source_id}
    return consultation.model_copy(update={"id": pick.id, "meta": meta})


async def screen_with_agent(
    store: RunStore,
    client: LLMClient,
    cases: list[Consultation],
    image_root: Path | None = None,
) -> dict[str, PrivacyScreen | None]:
    """4a agent verdicts by source case id; ``None`` marks a recorded failure."""
    sources = {c.meta.get("duplicate_of") or c.id: c for c in cases}
    todo = sorted(set(sources) - store.keys(stages.CORPUS_PRIVACY))

    async def work(key: str) -> None:
        result = await screen_privacy(client, sources[key], image_root)
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

    stats = await run_units(
        todo, work, description="4a privacy screen", already_done=len(sources) - len(todo)
    )
    for key, error in stats.errors.items():  # e.g. a missing image: recorded, retried next run
        store.put(stages.CORPUS_PRIVACY, key, None, status=FAILED, error=error)
    return {key: store.get(stages.CORPUS_PRIVACY, key, PrivacyScreen) for key in sources}


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
            built = store.keys(stages.CORPUS_SAMPLED) | store.keys(stages.CORPUS_DROPPED)
            previous = {key.split(COPY_MARK)[0] for key in built}
            check_shrink(out, previous, incoming, allow=allow_shrink)
            remove_derived(out)
        return _build(input_path, out, config, engine, workers, spec, store, limit)
    finally:
        if owned:
            store.close()


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
    screened = collect(input_path, _screen(input_path, config, engine, workers, limit))
    balanced = balance(((i, dept) for i, (dept, _) in screened.kept.items()), config.balance)
    candidates = [materialize(p, screened.kept[p.source_id][1]) for p in balanced.picks]
    privacy_drops: list[Drop] = []
    survivors: list[Consultation] = []
    for case in candidates:
        drop = privacy_rule(case, config.privacy)
        if drop is None:
            survivors.append(case)
        else:
            privacy_drops.append(drop)
    backend: LLMClient | None = None
    if spec is not None and survivors:
        backend = open_client(spec, None, store.cache, meta=store)
        image_root = input_path.parent if send_pixels(backend, wanted=True) else None
        verdicts = run_with_client(
            backend, lambda client: screen_with_agent(store, client, survivors, image_root)
        )
        survivors, agent_drops = _apply_verdicts(survivors, verdicts)
        privacy_drops.extend(agent_drops)
    drops = sorted(
        [*screened.drops, *balanced.drops, *privacy_drops], key=lambda d: d.consultation_id
    )
    snapshots = {
        **screened.snapshots,
        "C3": Counter(p.department for p in balanced.picks),
        "C3'": Counter(c.department for c in survivors),
    }
    copies = sum(p.is_copy for p in balanced.picks)
    manifest = Manifest(
        input=input_path.name,
        config=config,
        privacy_backend=backend.name if backend else None,
        privacy_backend_is_baseline=backend is not None and backend.is_baseline,
        balance_cap=balanced.cap,
        stages=stage_counts(sum(screened.snapshots["C0"].values()), drops, copies),
        departments=department_table(snapshots),
    )
    _persist(store, out, input_path, survivors, drops, manifest)
    return manifest


def _screen(
    input_path: Path,
    config: CorpusConfig,
    engine: Engine,
    workers: int | None,
    limit: int | None = None,
) -> list[ScreenRow]:
    shards = plan_shards(input_path, limit=limit)
    with make_progress() as progress:
        total = sum(shard.lines for shard in shards)
        task = progress.add_task(f"screen lines ({engine.value})", total=total)
        advance: Callable[[int], None] = lambda n: progress.advance(task, n)  # noqa: E731
        rows = run_screen(
            shards, config.completeness, engine=engine, workers=workers, progress=advance
        )
        progress.update(task, completed=total)  # blank lines yield no row
    return rows


def _apply_verdicts(
    cases: list[Consultation], verdicts: dict[str, PrivacyScreen | None]
) -> tuple[list[Consultation], list[Drop]]:
    kept: list[Consultation] = []
    drops: list[Drop] = []
    for case in cases:
        verdict = verdicts[case.meta.get("duplicate_of") or case.id]  # type: ignore[index]
        if verdict is None:
            reason, detail = DropReason.PRIVACY_SCREEN_FAILED, "agent failed; retried on rerun"
            drops.append(Drop.of(case.id, case.department, reason, detail))
        elif verdict.remove:
            drops.append(
                Drop.of(case.id, case.department, DropReason.FACE_DEPENDENT, "agent: remove")
            )
        else:
            kept.append(case)
    return kept, drops


def _persist(
    store: RunStore,
    out: Path,
    input_path: Path,
    survivors: list[Consultation],
    drops: list[Drop],
    manifest: Manifest,
) -> None:
    """Replace the corpus rows wholesale, in one transaction, so a rebuild with a new config
    leaves none stale and a killed rebuild leaves the old corpus whole."""
    store.replace(
        {
            stages.CORPUS_SAMPLED: ((c.id, c) for c in survivors),
            stages.CORPUS_DROPPED: ((d.consultation_id, d) for d in drops),
        }
    )
    store.set_meta(stages.image_root_key(stages.CORPUS_SAMPLED), str(input_path.parent.resolve()))
    store.set_meta(MANIFEST_META, manifest.model_dump(mode="json"))
    write_jsonl(out / SAMPLED_FILE, sorted(survivors, key=lambda c: c.id))
    write_jsonl(out / DROPPED_FILE, drops)
    manifest.write(out / MANIFEST_FILE)
