"""What an evaluation runs over: each instance with its rubric, read from the run store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from medrealmm.schema import Instance, Rubric
from medrealmm.store import RunStore, stages


@dataclass(frozen=True)
class EvalCase:
    instance: Instance
    rubric: Rubric
    approved: bool  # False: scored against the latest refinement round, not an approved rubric


def _latest_rounds(store: RunStore) -> dict[str, str]:
    latest: dict[str, tuple[int, str]] = {}
    for key in store.keys(stages.RUBRIC_ROUND):
        instance_id, _, round_text = key.rpartition("#")
        if not instance_id or not round_text.isdigit():
            continue
        number = int(round_text)
        if instance_id not in latest or number > latest[instance_id][0]:
            latest[instance_id] = (number, key)
    return {instance_id: key for instance_id, (_, key) in latest.items()}


def load_cases(store: RunStore) -> tuple[list[EvalCase], list[str]]:
    """Cases in instance-id order, and the ids of instances that have no rubric yet.

    The rubric is RUBRIC_FINAL when approved, else the highest RUBRIC_ROUND (unapproved).
    """
    rounds = _latest_rounds(store)
    cases: list[EvalCase] = []
    missing: list[str] = []
    for instance in store.iter(stages.MCCP_INSTANCE, Instance):
        final = store.get(stages.RUBRIC_FINAL, instance.id, Rubric)
        if final is not None:
            cases.append(EvalCase(instance, final, approved=True))
            continue
        key = rounds.get(instance.id)
        latest = store.get(stages.RUBRIC_ROUND, key, Rubric) if key else None
        if latest is None:
            missing.append(instance.id)
        else:
            cases.append(EvalCase(instance, latest, approved=latest.approved))
    return cases, missing


def image_root(store: RunStore) -> Path | None:
    root = store.get_meta(stages.image_root_key(stages.MCCP_INSTANCE))
    return Path(root) if root else None
