"""The rubric stages over a run store: generate R^(0) for every instance, refine every round
that has feedback. Each instance's round is one unit, committed as it finishes, so a killed
run resumes where it stopped and the LLM cache repeats no finished call."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from medrealmm.llm import LLMClient, send_pixels
from medrealmm.rubric.agents import AgentResult, generate_rubric, refine_rubric
from medrealmm.rubric.rounds import (
    RubricState,
    latest_round,
    load_feedback,
    round_history,
    round_key,
    save_round,
    states,
)
from medrealmm.rubric.settings import RubricSettings
from medrealmm.runner import RunStats, run_units
from medrealmm.schema import Instance
from medrealmm.store import FAILED, RunStore, stages
from medrealmm.store.keys import RoundKey, usage_label

USAGE_STAGE = usage_label(stages.RUBRIC_ROUND)
#: Passes over rounds whose feedback grew while the Refiner worked on them (each pass reads
#: every item given so far); any still growing wait for the next run or submission.
LATE_FEEDBACK_PASSES = 3


def instance_image_root(
    store: RunStore, client: LLMClient, settings: RubricSettings
) -> Path | None:
    """Where the instances' images come from when pixels go (``send_pixels``), else None."""
    if not send_pixels(client, settings.with_images):
        return None
    key = stages.image_root_key(stages.MCCP_INSTANCE)
    root = store.image_root(stages.MCCP_INSTANCE)
    if root is None:
        raise ValueError(
            f"the run store has no image root for {stages.MCCP_INSTANCE} (meta {key!r}); "
            "run with images off or record where the instance images live"
        )
    return root


def _record(store: RunStore, client: LLMClient, key: str, result: AgentResult) -> None:
    store.record_calls(USAGE_STAGE, client.name, result.completions, result.failed_attempts)
    if result.rubric is None:
        store.put(stages.RUBRIC_ROUND, key, None, status=FAILED, error=result.error)
    else:
        save_round(store, result.rubric)


async def generate_all(
    store: RunStore,
    client: LLMClient,
    settings: RubricSettings,
    *,
    concurrency: int = 8,
    limit: int | None = None,
) -> RunStats:
    """R^(0) for every MCCP instance that has none yet (failed ones are retried); only the
    first ``limit`` instances by id when given (a trial run against a new endpoint)."""
    store.prune_stale(stages.RUBRIC_ROUND)  # instances that changed or went since
    done = {key for key in store.keys(stages.RUBRIC_ROUND) if RoundKey.parse(key).round == 0}
    chosen = sorted(store.keys(stages.MCCP_INSTANCE))[:limit]
    todo = [i for i in chosen if round_key(i, 0) not in done]
    image_root = instance_image_root(store, client, settings)

    async def work(instance_id: str) -> None:
        instance = store.get(stages.MCCP_INSTANCE, instance_id, Instance)
        if instance is None:
            raise ValueError(f"instance {instance_id!r} vanished from the store")
        result = await generate_rubric(client, instance, settings, image_root=image_root)
        _record(store, client, round_key(instance_id, 0), result)

    return await run_units(
        todo,
        work,
        description="rubric: generate",
        concurrency=concurrency,
        already_done=len(done),
    )


async def refine_all(
    store: RunStore,
    client: LLMClient,
    settings: RubricSettings,
    *,
    concurrency: int = 8,
    instance_ids: Collection[str] | None = None,
    limit: int | None = None,
) -> RunStats:
    """R^(k+1) for every instance (or just ``instance_ids``, e.g. the one a physician has
    just reviewed) whose latest round has non-empty feedback and k < max_rounds; only the
    first ``limit`` of those by id when given (a trial run against a new endpoint)."""
    ready = sorted(
        iid
        for iid, state in states(store, settings).items()
        if state in (RubricState.AWAITING_REFINEMENT, RubricState.FAILED)
        and (instance_ids is None or iid in instance_ids)
        and latest_round(store, iid) is not None
    )[:limit]
    image_root = instance_image_root(store, client, settings)
    late: set[str] = set()
    late_events = 0

    async def work(instance_id: str) -> None:
        instance = store.get(stages.MCCP_INSTANCE, instance_id, Instance)
        rounds = round_history(store, instance_id)
        current = rounds[-1]
        feedback = load_feedback(store, instance_id, current.round)
        if instance is None or feedback is None:
            raise ValueError(f"instance {instance_id!r} lacks its instance or feedback row")
        used = {c.id for r in rounds for c in r.criteria}
        result = await refine_rubric(
            client, instance, current, feedback, settings, used_ids=used, image_root=image_root
        )
        with store.transaction():
            # Feedback given while the Refiner worked would be lost under a round made
            # without it: the round is refined again, from every item.
            if load_feedback(store, instance_id, current.round) != feedback:
                nonlocal late_events
                late.add(instance_id)
                late_events += 1
                return
            _record(store, client, round_key(instance_id, current.round + 1), result)

    stats = await run_units(ready, work, description="rubric: refine", concurrency=concurrency)
    for _ in range(LATE_FEEDBACK_PASSES):
        if not late:
            break
        again, late = sorted(late), set()
        more = await run_units(again, work, description="rubric: refine", concurrency=concurrency)
        stats.done += more.done
        stats.failed += more.failed
        stats.errors.update(more.errors)
    stats.done -= late_events  # a late unit wrote nothing; any still late wait for the next run
    return stats
