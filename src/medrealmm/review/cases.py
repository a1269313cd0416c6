"""Read what reviewers look at (consultations, instances, images) from the run store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from medrealmm.io.images import MissingImageError, resolve_image
from medrealmm.rubric.rounds import rubric_for_evaluation
from medrealmm.schema import Consultation, Event, Instance, Rubric
from medrealmm.store import RunStore, stages

# Consultation stages a reviewer may open; raw (pre-screening) records stay out of the app.
CONSULTATION_STAGES = (stages.CORPUS_SAMPLED, stages.CORPUS_DEID, stages.CORPUS_FINAL)
IMAGE_STAGES = (*CONSULTATION_STAGES, stages.MCCP_INSTANCE)
#: Viewable stages still holding patient identifiers (de-id reviewers only).
UNMASKED_STAGES = (stages.CORPUS_SAMPLED,)


@dataclass(frozen=True)
class CaseView:
    """What the consultation template shows: turns in order, with where their images live."""

    stage: str
    key: str
    title: str
    department: str
    events: list[Event]


class CaseNotFound(LookupError):
    pass


def load_consultation(store: RunStore, stage: str, key: str) -> CaseView:
    if stage not in CONSULTATION_STAGES:
        raise CaseNotFound(f"stage {stage!r} is not viewable")
    consultation = store.get(stage, key, Consultation)
    if consultation is None:
        raise CaseNotFound(f"no consultation {key!r} in {stage}")
    return CaseView(stage, key, consultation.id, consultation.department, consultation.events)


def load_instance(store: RunStore, instance_id: str) -> Instance:
    instance = store.get(stages.MCCP_INSTANCE, instance_id, Instance)
    if instance is None:
        raise CaseNotFound(f"no instance {instance_id!r}")
    return instance


def instance_view(instance: Instance) -> CaseView:
    """The context C<=t* only: the hidden target reply is never part of this view."""
    return CaseView(
        stages.MCCP_INSTANCE,
        instance.id,
        instance.id,
        instance.department,
        instance.context,
    )


def events_of(store: RunStore, stage: str, key: str) -> list[Event]:
    if stage == stages.MCCP_INSTANCE:
        return load_instance(store, key).context
    return load_consultation(store, stage, key).events


def image_path(store: RunStore, stage: str, key: str, event: int, image: int) -> Path:
    """The file behind image ``image`` of event ``event``; never a path outside the stage root."""
    if stage not in IMAGE_STAGES:
        raise CaseNotFound(f"stage {stage!r} has no viewable images")
    events = events_of(store, stage, key)
    if not 0 <= event < len(events) or not 0 <= image < len(events[event].images):
        raise CaseNotFound("no such image")
    root = store.image_root(stage)
    if root is None:
        raise CaseNotFound(f"the store records no image root for {stage}")
    try:
        return resolve_image(root, events[event].images[image])
    except MissingImageError as exc:
        raise CaseNotFound(str(exc)) from None


def rubric_for(store: RunStore, instance_id: str) -> Rubric | None:
    """The approved rubric, else the latest round (the caller shows it as unapproved)."""
    return rubric_for_evaluation(store, instance_id)
