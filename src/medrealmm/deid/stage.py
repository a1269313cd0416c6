"""The Φdeid stage: C3 (corpus.sampled) -> C4 (corpus.deid); refused until the corpus is built.

Each consultation is one unit: text masked (rules, LLM pass, consistency), every image
re-encoded and masked into ``<run>/deid/``, then its de-id record and its masked copy
written. The masked copy is written last, so a killed run redoes at most the units in flight.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from medrealmm.deid.consultation import deid_turns
from medrealmm.deid.image import encode_clean, load_without_metadata, mask_image
from medrealmm.deid.near_miss import find_suspects
from medrealmm.deid.record import DeidRecord, ImageRecord, MaskedSpan, TurnRecord
from medrealmm.deid.text import prepare
from medrealmm.engines import Offload
from medrealmm.io import file_sha256, resolve_image
from medrealmm.llm import LLMClient
from medrealmm.runner import RunStats, run_units
from medrealmm.schema import Consultation, ImageRef
from medrealmm.store import FAILED, RunStore, stages
from medrealmm.store.keys import usage_label

T = TypeVar("T")

USAGE_STAGE = usage_label(stages.DEID_RECORD)
OUTPUT_FOLDER = "deid"
# Store meta: the per-run HMAC secret behind every MaskedSpan.digest of this run.
SECRET_META = "deid.hmac_secret"


def run_secret(store: RunStore | None) -> bytes:
    """The run's digest secret, made on first use; a throwaway one without a store."""
    if store is None:
        return secrets.token_bytes(32)
    found = store.get_meta(SECRET_META)
    if found is None:
        found = secrets.token_hex(32)
        store.set_meta(SECRET_META, found)
    return bytes.fromhex(found)


#: The one stage de-identification reads: never raw, which holds the cases Phase 1 removed.
INPUT_STAGE = stages.CORPUS_SAMPLED


def mask_image_file(source: Path, target: Path, rel: str) -> ImageRecord:
    rgb = load_without_metadata(source)
    result = mask_image(rgb)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_bytes(encode_clean(result.image, target.suffix))
    tmp.replace(target)
    return ImageRecord(
        source=rel,
        output=rel,
        width=rgb.shape[1],
        height=rgb.shape[0],
        boxes=result.boxes,
        metadata_stripped=True,
        face_detector=result.face_detector,
        needs_review=result.needs_review,
        seconds=round(result.seconds, 3),
        near_misses=result.near_misses,
    )


async def deid_one(
    consultation: Consultation,
    source_root: Path,
    target_root: Path,
    client: LLMClient | None,
    store: RunStore | None = None,
    offload: Offload | None = None,
) -> tuple[Consultation, DeidRecord]:
    """Mask one consultation; its images on ``offload`` (a thread when None)."""
    run = offload or _in_thread
    events = consultation.events
    outcome = await deid_turns([e.content for e in events], client, [e.sender for e in events])
    if store is not None and client is not None:
        store.record_calls(USAGE_STAGE, client.name, outcome.completions, outcome.failed_attempts)
    secret = run_secret(store)
    near = [
        find_suspects(event.content, spans, vetoed)
        for event, spans, vetoed in zip(
            consultation.events, outcome.spans, outcome.vetoed, strict=True
        )
    ]
    record = DeidRecord(
        consultation_id=consultation.id,
        turns=[
            TurnRecord(event=i, spans=[MaskedSpan.of(s, secret) for s in spans], suspects=suspects)
            for i, (spans, suspects) in enumerate(zip(outcome.spans, near, strict=True))
            if spans or suspects
        ],
        llm_model=client.name if client is not None else None,
        llm_ok=outcome.llm_ok,
        llm_error=outcome.llm_error,
    )
    events = []
    for event, masked in zip(consultation.events, outcome.masked, strict=True):
        refs: list[ImageRef] = []
        for ref in event.images:
            source = resolve_image(source_root, ref)
            target = target_root / ref.path
            image_record = await run(mask_image_file, source, target, ref.path)
            record.images.append(image_record)
            refs.append(ref.model_copy(update={"sha256": file_sha256(target)}))
        events.append(event.model_copy(update={"content": masked, "images": refs}))
    return consultation.model_copy(update={"events": events}), record


async def _in_thread(fn: Callable[..., T], *args: Any) -> T:
    return await asyncio.to_thread(fn, *args)


# Consultations whose turns the NER model tags together (more clauses of each length per run).
PREPARE_WINDOW = 16


async def run_deid_stage(
    store: RunStore,
    run_dir: Path | str,
    client: LLMClient | None,
    *,
    concurrency: int = 2,
    offload: Offload | None = None,
    limit: int | None = None,
) -> RunStats:
    """De-identify every consultation of corpus.sampled not yet in corpus.deid; images are
    masked on ``offload`` (``medrealmm.engines``: local processes or Ray), text here."""
    source_stage = INPUT_STAGE
    if not store.is_built(source_stage):
        raise ValueError(
            f"{store.path} holds no {source_stage!r} stage; run `medrealmm corpus build` first"
        )
    source_root = store.image_root(source_stage)
    if source_root is None:
        raise ValueError(f"store has no image root for stage {source_stage!r}")
    target_root = Path(run_dir) / OUTPUT_FOLDER
    target_root.mkdir(parents=True, exist_ok=True)
    store.set_image_root(stages.CORPUS_DEID, target_root)
    run_secret(store)  # made once here, before units run concurrently
    store.prune_stale(stages.CORPUS_DEID)  # cases the corpus changed or dropped since
    store.prune_stale(stages.DEID_RECORD)
    chosen = sorted(store.keys(source_stage))[:limit]  # --limit: the first N by id
    done = store.keys(stages.CORPUS_DEID) & set(chosen)
    todo = [key for key in chosen if key not in done]

    position = {key: i for i, key in enumerate(todo)}
    prepared: set[str] = set()

    async def work(key: str) -> None:
        if key not in prepared:  # the NER model tags the next window's turns in shared batches
            window = todo[position[key] : position[key] + PREPARE_WINDOW]
            prepared.update(window)
            cases = (store.get(source_stage, k, Consultation) for k in window)
            prepare([e.content for case in cases if case is not None for e in case.events])
        consultation = store.get(source_stage, key, Consultation)
        if consultation is None:
            raise KeyError(f"{source_stage}/{key} vanished")
        try:
            masked, record = await deid_one(
                consultation, Path(source_root), target_root, client, store, offload
            )
        except Exception as exc:
            # Recorded for the operator; the case stays out of corpus.deid and is retried.
            store.put(
                stages.DEID_RECORD, key, None, status=FAILED, error=f"{type(exc).__name__}: {exc}"
            )
            raise
        made_from = [(source_stage, key)]  # a changed or removed case drops both rows
        store.put(stages.DEID_RECORD, key, record, sources=made_from)
        store.put(stages.CORPUS_DEID, key, masked, sources=made_from)

    return await run_units(
        todo,
        work,
        description="de-identifying",
        concurrency=concurrency,
        already_done=len(done),
    )
