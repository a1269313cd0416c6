"""What a release is made of, read from the run store: only de-identified work leaves it.

The corpus comes from ``corpus.final`` (approved by both review passes) or, flagged as not
review-approved, ``corpus.deid``. Raw or merely sampled consultations are refused: the paper
never redistributes pre-masking data. Instances and rubrics are kept only for released
consultations, and an instance whose text differs from its masked consultation is refused, since
that means it was cut from an unmasked stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from medrealmm.rubric.rounds import evaluation_rubrics
from medrealmm.schema import Consultation, Instance, Rubric
from medrealmm.store import RunStore, stages

RELEASABLE_CORPUS = (stages.CORPUS_FINAL, stages.CORPUS_DEID)


class UnmaskedDataError(ValueError):
    """The store holds nothing that may be released, or something cut from unmasked text."""


class UnreviewedReleaseError(ValueError):
    """What would ship has not passed review, and no one said to release it anyway."""


@dataclass(frozen=True)
class ReleaseSources:
    corpus_stage: str
    rubric_stage: str | None
    image_root: Path
    consultations: list[Consultation]
    instances: list[Instance]
    rubrics: list[Rubric]

    @property
    def corpus_review_approved(self) -> bool:
        return self.corpus_stage == stages.CORPUS_FINAL

    @property
    def rubrics_approved(self) -> bool:
        return self.rubric_stage == stages.RUBRIC_FINAL

    def review_gaps(self) -> list[str]:
        """What in these sources the paper's review has not passed: consultations not in
        ``corpus.final`` (both review passes), rubrics no physician approved."""
        gaps = []
        if not self.corpus_review_approved and self.consultations:
            gaps.append(
                f"{len(self.consultations)} consultations are not review-approved "
                f"({self.corpus_stage}, not {stages.CORPUS_FINAL})"
            )
        unapproved = sum(not r.approved for r in self.rubrics)
        if unapproved:
            gaps.append(f"{unapproved} of {len(self.rubrics)} rubrics are not approved")
        return gaps


def releasable_corpus_stage(store: RunStore) -> str:
    for stage in RELEASABLE_CORPUS:
        if store.count(stage):
            return stage
    present = [s for s in (stages.CORPUS_SAMPLED, stages.RAW) if store.count(s)]
    hint = f" (it has only {', '.join(present)})" if present else ""
    raise UnmaskedDataError(
        f"run store {store.path} has no de-identified corpus ({' or '.join(RELEASABLE_CORPUS)})"
        f"{hint}; only de-identified consultations may be released"
    )


def image_root(store: RunStore, corpus_stage: str) -> Path:
    """The masked image copies; ``corpus.final`` approves ``corpus.deid`` rows and may share them.

    Never falls back to the raw or sampled roots: those hold unmasked images.
    """
    for stage in (corpus_stage, stages.CORPUS_DEID):
        root = store.image_root(stage)
        if root:
            return root
    raise UnmaskedDataError(
        f"run store {store.path} records no image root for {corpus_stage} "
        f"(meta '{stages.image_root_key(corpus_stage)}'); cannot tell where the masked images are"
    )


def latest_rubrics(store: RunStore) -> tuple[str | None, list[Rubric]]:
    """Each instance's approved rubric, else its latest refinement round (the rule evaluation
    applies). The stage is RUBRIC_FINAL only when every shipped rubric is approved; each
    rubric's own ``approved`` field says which are."""
    chosen = evaluation_rubrics(store)
    if not chosen:
        return None, []
    rubrics = list(chosen.values())
    stage = stages.RUBRIC_FINAL if all(r.approved for r in rubrics) else stages.RUBRIC_ROUND
    return stage, rubrics


def check_cut_from(instance: Instance, consultation: Consultation) -> None:
    """An instance must be a prefix of its released (masked) consultation, text and images."""
    events = consultation.events[: len(instance.context)]
    same = len(events) == len(instance.context) and all(
        mine.content == theirs.content
        and [ref.path for ref in mine.images] == [ref.path for ref in theirs.images]
        for mine, theirs in zip(instance.context, events, strict=True)
    )
    if not same:
        raise UnmaskedDataError(
            f"instance '{instance.id}' does not match the de-identified consultation "
            f"'{consultation.id}' it was cut from; was MCCP run on an unmasked corpus stage? "
            "Rerun MCCP on the de-identified corpus before releasing"
        )


def collect(store: RunStore) -> ReleaseSources:
    corpus_stage = releasable_corpus_stage(store)
    consultations = list(store.iter(corpus_stage, Consultation))
    by_id = {c.id: c for c in consultations}
    instances = [
        i for i in store.iter(stages.MCCP_INSTANCE, Instance) if i.consultation_id in by_id
    ]
    for instance in instances:
        check_cut_from(instance, by_id[instance.consultation_id])
    instance_ids = {i.id for i in instances}
    rubric_stage, rubrics = latest_rubrics(store)
    return ReleaseSources(
        corpus_stage=corpus_stage,
        rubric_stage=rubric_stage,
        image_root=image_root(store, corpus_stage),
        consultations=consultations,
        instances=instances,
        rubrics=[r for r in rubrics if r.instance_id in instance_ids],
    )
