"""What an evaluation runs over: each instance with its rubric, read from the run store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from medrealmm.rubric.rounds import evaluation_rubrics
from medrealmm.schema import Instance, Rubric
from medrealmm.store import RunStore, stages


@dataclass(frozen=True)
class EvalCase:
    instance: Instance
    rubric: Rubric
    approved: bool  # False: scored against the latest refinement round, not an approved rubric


def load_eval_cases(store: RunStore) -> tuple[list[EvalCase], list[str]]:
    """Cases in instance-id order, and the ids of instances that have no rubric yet.

    The rubric is RUBRIC_FINAL when approved, else the highest RUBRIC_ROUND (unapproved).
    """
    rubrics = evaluation_rubrics(store)
    cases: list[EvalCase] = []
    missing: list[str] = []
    for instance in store.iter(stages.MCCP_INSTANCE, Instance):
        rubric = rubrics.get(instance.id)
        if rubric is None:
            missing.append(instance.id)
        else:
            cases.append(EvalCase(instance, rubric, approved=rubric.approved))
    return cases, missing


def image_root(store: RunStore) -> Path | None:
    return store.image_root(stages.MCCP_INSTANCE)


def pixel_root(store: RunStore, cases: Sequence[EvalCase], sends_pixels: bool) -> Path | None:
    """Where the instances' images live; an error when pixels are to be sent and nobody
    recorded it (never a silent fall back to text-only requests)."""
    root = image_root(store)
    if root is None and sends_pixels and any(case.instance.image_count for case in cases):
        raise ValueError(
            f"the run store has no image root for {stages.MCCP_INSTANCE} "
            f"(meta {stages.image_root_key(stages.MCCP_INSTANCE)!r}); "
            "run with images off or record where the instance images live"
        )
    return root
