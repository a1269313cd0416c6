"""Ingest: the run's input folder -> ``raw``, with the file's hash kept so later stages can
tell the input they read is the one ingested."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from medrealmm.demo import CORPUS_FILE
from medrealmm.io import file_sha256
from medrealmm.io.dataset import check_dataset, check_shrink
from medrealmm.io.errors import duplicate_id
from medrealmm.io.jsonl import iter_jsonl_lines
from medrealmm.pipeline.contract import Stage, StageContext, StageReport
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages


def input_file(corpus_dir: Path) -> Path:
    source = corpus_dir / CORPUS_FILE
    if not source.is_file():
        raise FileNotFoundError(f"{source} not found: the input folder must hold {CORPUS_FILE}")
    return source


def load_raw(
    store: RunStore, corpus_dir: Path, limit: int | None = None, *, allow_shrink: bool = False
) -> int:
    """Replace ``raw`` with CORPUS_DIR/consultations.jsonl (its first ``limit`` records when
    given) in one transaction; refuse a run folder that already holds a different corpus.

    Nothing is written before the file passes ``validate``'s checks and, on a run that holds
    consultations already, before the shrink guard (``--allow-shrink``); the run's release and
    report, made from the rows about to change, go with the first write (``store.derived``)."""
    source = input_file(corpus_dir)
    root = corpus_dir.resolve()
    recorded = store.image_root(stages.RAW)
    if recorded and recorded.resolve() != root and store.count(stages.RAW):
        raise ValueError(
            f"{store.path} already holds a run over {recorded}; use another run folder"
        )
    summary = check_dataset(source, limit=limit)
    held = (key for (key,) in store.fields(stages.RAW, ()))
    check_shrink(store.path.parent, held, summary.ids, allow=allow_shrink)
    store.replace({stages.RAW: islice(_unique(source), limit)})
    store.set_image_root(stages.RAW, root)
    store.set_meta(
        stages.INPUT_META, {"path": str(source.resolve()), "sha256": file_sha256(source)}
    )
    return store.count(stages.RAW)


def _unique(source: Path) -> Iterator[tuple[str, Consultation]]:
    """Records keyed by id; a repeated id is an error (a store row would keep the last silently)."""
    first: dict[str, int] = {}
    for number, case in iter_jsonl_lines(source, Consultation):
        if case.id in first:
            raise duplicate_id(source, number, case.id, first[case.id])
        first[case.id] = number
        yield case.id, case


def ingested_file(store: RunStore) -> Path:
    """The file ``raw`` was loaded from, refusing one that changed since (re-ingest it)."""
    recorded = store.get_meta(stages.INPUT_META)
    if not recorded:
        raise ValueError(f"{store.path} records no ingested input; run the ingest stage first")
    path = Path(recorded["path"])
    if not path.is_file() or file_sha256(path) != recorded["sha256"]:
        raise ValueError(f"{path} changed or vanished since it was ingested; ingest it again")
    return path


class Ingest(Stage):
    name = "ingest"
    reads = None
    writes = (stages.RAW,)
    cli = "medrealmm run"

    def run(self, ctx: StageContext) -> StageReport:
        limit = ctx.settings.limit
        n = load_raw(
            ctx.store, ctx.settings.input, limit=limit, allow_shrink=ctx.settings.allow_shrink
        )
        note = f" (the first {limit}: --limit)" if limit is not None else ""
        return StageReport(self.name, [f"raw consultations loaded: {n}{note}"])
