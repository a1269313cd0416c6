"""MCCP extraction over a run store: one consultation in, one Instance or a discard out."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from medrealmm.io import write_jsonl
from medrealmm.llm import LLMClient, send_pixels
from medrealmm.losses import Loss
from medrealmm.mccp.agents import INTENT_TASK, STAGE_TASK, MccpAgents
from medrealmm.mccp.candidates import (
    candidate_turns,
    history_up_to,
    patient_images_before,
    target_reply,
)
from medrealmm.mccp.selection import (
    DEFAULT_MIN_GAP,
    CandidateJudgement,
    discard_reason,
    select_challenge_points,
)
from medrealmm.mccp.taxonomy import Taxonomy, builtin_taxonomy
from medrealmm.runner import run_units
from medrealmm.schema import Consultation, Instance
from medrealmm.store import FAILED, RunStore, stages
from medrealmm.store.keys import InstanceKey, usage_label

USAGE_STAGE = usage_label(stages.MCCP_INSTANCE)


class DiscardRecord(BaseModel):
    """A consultation with no admitted candidate, and every candidate's judgements as evidence."""

    model_config = ConfigDict(extra="forbid")

    consultation_id: str
    department: str
    reason: str
    candidates: list[CandidateJudgement]


def instance_id(consultation_id: str, t_star: int) -> str:
    return InstanceKey(consultation_id, t_star).format()


async def extract_consultation(
    agents: MccpAgents,
    consultation: Consultation,
    *,
    points: int = 1,
    min_gap: int = DEFAULT_MIN_GAP,
) -> list[Instance] | DiscardRecord:
    """Cropper on every t in T, Verifier on the engaged ones with an image, then t* (and with
    ``points`` > 1 further challenge points, ``select_challenge_points``), each labelled."""
    events = consultation.events
    turns = candidate_turns(events)
    croppings = await asyncio.gather(*(agents.crop(consultation, t) for t in turns))
    judgements = [
        CandidateJudgement(t=t, cropper=j, patient_images=patient_images_before(events, t))
        for t, j in zip(turns, croppings, strict=True)
    ]
    # The Verifier is not asked where no patient image exists yet: such a t cannot be admitted.
    engaged = [j for j in judgements if j.cropper.label and j.patient_images]
    verdicts = await asyncio.gather(*(agents.verify(consultation, j.t) for j in engaged))
    for judgement, verdict in zip(engaged, verdicts, strict=True):
        judgement.verifier = verdict
    chosen = select_challenge_points(judgements, points, min_gap)
    if not chosen:
        return DiscardRecord(
            consultation_id=consultation.id,
            department=consultation.department,
            reason=discard_reason(judgements),
            candidates=judgements,
        )
    return list(await asyncio.gather(*(_instance(agents, consultation, j) for j in chosen)))


async def _instance(
    agents: MccpAgents, consultation: Consultation, point: CandidateJudgement
) -> Instance:
    events = consultation.events
    context = history_up_to(events, point.t)
    intent, stage = await asyncio.gather(
        agents.label(INTENT_TASK, consultation.department, context),
        agents.label(STAGE_TASK, consultation.department, context),
    )
    return Instance(
        id=instance_id(consultation.id, point.t),
        consultation_id=consultation.id,
        department=consultation.department,
        subspecialty=consultation.subspecialty,
        t_star=point.t,
        context=context,
        target_reply=target_reply(events, point.t),
        intent=intent,
        stage=stage,
        cropper=point.cropper,
        verifier=point.verifier,
        consultation_turns=len(events),
    )


@dataclass
class MccpSummary:
    source_stage: str
    consultations: int = 0
    instances: int = 0
    discarded: int = 0
    failed: int = 0
    reused: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    errors: dict[str, str] = field(default_factory=dict)

    def loss(self) -> Loss:
        """Consultations that gave no instance: discarded (no challenge point) or failed."""
        return Loss("mccp (discarded or failed)", self.consultations, self.discarded + self.failed)

    def lines(self) -> list[str]:
        reasons = ", ".join(f"{k}={v}" for k, v in sorted(self.reasons.items())) or "none"
        return [
            f"mccp: {self.instances} instances from {self.consultations} consultations "
            f"({self.source_stage}); discarded {self.discarded} ({reasons}); "
            f"failed {self.failed}; reused from earlier runs {self.reused}"
        ]


def finished_consultations(store: RunStore) -> set[str]:
    done = store.keys(stages.MCCP_DISCARDED)
    done.update(instance.consultation_id for instance in store.iter(stages.MCCP_INSTANCE, Instance))
    return done


def unmasked_instances(store: RunStore, step: str) -> str | None:
    """``step``'s PHI note when this run's instances came from an un-masked stage, else None.

    Later steps (rubric, eval, the review app's Refiner) pass it as ``unmasked`` to the client,
    so the PHI egress rule follows the data, not the stage name."""
    source = store.get_meta(stages.MCCP_SOURCE_META)
    if source not in stages.UNMASKED_STAGES:
        return None
    return f"{step} on instances extracted from the un-masked stage {source!r}"


async def run_mccp(
    store: RunStore,
    client: LLMClient,
    *,
    source_stage: str,
    intent_taxonomy: Taxonomy | None = None,
    stage_taxonomy: Taxonomy | None = None,
    verifier_images: bool = True,
    concurrency: int = 16,
    limit: int | None = None,
    points: int = 1,
    min_gap: int = DEFAULT_MIN_GAP,
    points_slice: int | None = None,
) -> MccpSummary:
    """Extract MCCPs for every consultation of ``source_stage`` not yet done (only the first
    ``limit`` consultations by id when given: a trial run against a new endpoint); up to
    ``points`` per consultation, ``min_gap`` turns apart (1: the paper's single t*). With
    ``points_slice`` N only the first N consultations by id take ``points``, the rest one:
    k > 1 beside the paper's rule in one run, each figure's stratum by position shows both.

    Each consultation is committed as it finishes (an Instance, a discard record, or a
    failed row that the next run retries), so a killed run resumes without repeating work.
    Pixels go to the Verifier when asked for and the client reads images (``send_pixels``).
    """
    if not store.is_built(source_stage):
        raise ValueError(f"{store.path} holds no {source_stage!r} stage to extract MCCPs from")
    image_root = store.image_root(source_stage)
    if send_pixels(client, verifier_images) and image_root is None:
        raise ValueError(
            f"the run store has no image root for stage {source_stage!r}; "
            "load the corpus with its images first"
        )
    if image_root is not None:
        store.set_image_root(stages.MCCP_INSTANCE, image_root)
    store.set_meta(stages.MCCP_SOURCE_META, source_stage)
    _check_points_setting(store, points, min_gap, points_slice)

    agents = MccpAgents(
        client=client,
        intent_taxonomy=intent_taxonomy or builtin_taxonomy("intent"),
        stage_taxonomy=stage_taxonomy or builtin_taxonomy("stage"),
        image_root=image_root,
        verifier_images=verifier_images,
        on_result=lambda r: store.record_calls(
            USAGE_STAGE, client.name, r.completions, r.failed_attempts
        ),
    )
    store.prune_stale(stages.MCCP_INSTANCE)
    store.prune_stale(stages.MCCP_DISCARDED)
    all_keys = sorted(store.keys(source_stage))[:limit]
    done = finished_consultations(store)
    todo = [key for key in all_keys if key not in done]
    several = set(
        all_keys if points_slice is None else sorted(store.keys(source_stage))[:points_slice]
    )

    async def work(key: str) -> None:
        consultation = store.get(source_stage, key, Consultation)
        if consultation is None:
            raise KeyError(f"consultation {key} vanished from stage {source_stage}")
        try:
            outcome = await extract_consultation(
                agents, consultation, points=points if key in several else 1, min_gap=min_gap
            )
        except Exception as exc:
            store.put(stages.MCCP_DISCARDED, key, None, status=FAILED, error=f"{exc}")
            raise
        made_from = [(source_stage, key)]  # a changed or removed consultation drops it
        if isinstance(outcome, list):
            # every point of a consultation in one transaction: a kill keeps all or none
            store.put_many(
                stages.MCCP_INSTANCE,
                ((i.id, i) for i in outcome),
                sources={i.id: made_from for i in outcome},
            )
            store.delete(stages.MCCP_DISCARDED, key)  # an earlier failed attempt
        else:
            store.put(stages.MCCP_DISCARDED, key, outcome, sources=made_from)

    stats = await run_units(
        todo,
        work,
        description="MCCP extraction",
        concurrency=concurrency,
        already_done=len(all_keys) - len(todo),
    )
    summary = MccpSummary(
        source_stage=source_stage,
        consultations=len(all_keys),
        failed=stats.failed,
        reused=stats.skipped,
        errors=stats.errors,
    )
    summary.instances = store.count(stages.MCCP_INSTANCE)
    for record in store.iter(stages.MCCP_DISCARDED, DiscardRecord):
        summary.discarded += 1
        summary.reasons[record.reason] += 1
    return summary


def _check_points_setting(
    store: RunStore, points: int, min_gap: int, points_slice: int | None
) -> None:
    """A run keeps one points setting: finished consultations are not redone, so a changed
    setting would mix one and several points per consultation silently. The slice enters
    only when set, so a run extracted before it existed keeps its setting."""
    wanted: dict[str, int] = {"points": points, "min_gap": min_gap}
    if points_slice is not None:
        wanted["points_slice"] = points_slice
    kept = store.get_meta(stages.MCCP_POINTS_META)
    if kept is not None and kept != wanted and store.count(stages.MCCP_INSTANCE):
        raise ValueError(
            f"this run's MCCPs were extracted with {_setting(kept)}; rerun with --redo mccp "
            f"to extract with {_setting(wanted)}"
        )
    store.set_meta(stages.MCCP_POINTS_META, wanted)


def _setting(setting: dict[str, int]) -> str:
    order = ("points", "min_gap", "points_slice")
    return ", ".join(f"{name}={setting[name]}" for name in order if name in setting)


def export_outputs(store: RunStore, out_dir: Path | str) -> tuple[Path, Path]:
    """instances.jsonl (x with its hidden target y) and discarded.jsonl, in key order; a
    withdrawn case is left out (its rows stay in the store, its patient asked to be removed)."""
    out_dir = Path(out_dir)
    instances = out_dir / "instances.jsonl"
    discarded = out_dir / "discarded.jsonl"
    withdrawn = store.keys(stages.RELEASE_WITHDRAWN)
    kept = (
        i for i in store.iter(stages.MCCP_INSTANCE, Instance) if i.consultation_id not in withdrawn
    )
    write_jsonl(instances, kept)
    dropped = store.iter(stages.MCCP_DISCARDED, DiscardRecord)
    write_jsonl(discarded, (d for d in dropped if d.consultation_id not in withdrawn))
    store.refresh_kept()  # the folder's STALE marker, if any, described the files before
    return instances, discarded
