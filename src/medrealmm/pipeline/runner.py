"""Running stages: check each one's declared input, run it, mark what it wrote as built.

A stage whose input stage was never built is refused with a message naming the stage to run
first; nothing ever falls back to another input. Finished units live in the run store, so a
rerun (or a killed run restarted) does only what is left.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from medrealmm.losses import Loss
from medrealmm.pipeline.contract import Stage, StageContext, StageReport
from medrealmm.store import FAILED, RunStore
from medrealmm.store.derived import DERIVED, remove_derived


class MissingInputError(ValueError):
    """A stage's declared input stage has not been built in this run store."""


def require_input(store: RunStore, stage: Stage, source: str) -> None:
    if not store.is_built(source):
        raise MissingInputError(
            f"stage {stage.name!r} reads {source!r}, which {store.path} does not hold yet; "
            f"run the stage that writes it first (see `medrealmm run --help`)"
        )


def run_stage(stage: Stage, ctx: StageContext) -> StageReport:
    source = stage.source(ctx.settings)
    if source is not None:
        require_input(ctx.store, stage, source)
    report = stage.run(ctx)
    for written in stage.writes:
        ctx.store.mark_built(written)
    count_failures(ctx.store, stage, report)
    return report


def count_failures(store: RunStore, stage: Stage, report: StageReport) -> None:
    """Failures recorded as data (a rubric or reply the model never gave) count as failed:
    a unit that stored its failure returned normally, so the stage's own count missed it.
    Adds the stage's loss (its rows and units that raised, against the failed of them)."""
    recorded = sum(store.count(written, FAILED) for written in stage.writes)
    done = sum(store.count(written) for written in stage.writes)
    report.failed = max(report.failed, recorded)
    if done + report.failed:
        report.losses.append(Loss(stage.name, done + report.failed, report.failed))


def check_stage_names(
    chain: Sequence[Stage], *, skip: Collection[str] = (), redo: Collection[str] = ()
) -> None:
    """Every name a stage of ``chain``, and none both skipped and redone: which of the two
    was meant cannot be told, so neither wins."""
    known = [stage.name for stage in chain]
    unknown = sorted((set(skip) | set(redo)) - set(known))
    if unknown:
        raise ValueError(f"unknown stage(s) {', '.join(unknown)}; known: {', '.join(known)}")
    both = [name for name in known if name in set(skip) & set(redo)]
    if both:
        raise ValueError(
            f"--skip and --redo both name {', '.join(both)}: a stage is either left as it is "
            "or rebuilt; give one of them"
        )


def run_chain(
    ctx: StageContext,
    chain: Sequence[Stage],
    *,
    skip: Collection[str] = (),
    redo: Collection[str] = (),
) -> list[StageReport]:
    """Run ``chain`` in order; ``skip`` names stages left as they are, ``redo`` names stages
    whose rows are cleared first (one transaction) so they are rebuilt from their input.
    The run's release and report (``store.derived``) made before are removed first: the
    chain's own steps write them again from the rows as they are now."""
    check_stage_names(chain, skip=skip, redo=redo)
    todo = [stage for stage in chain if stage.name not in skip]
    if todo and todo[0].reads is not None:  # an input stage removes them after its checks
        later = chain[list(chain).index(todo[0]) :]
        remove_derived(ctx.run_dir, tuple(s.name for s in later if s.name in DERIVED))
    reports: list[StageReport] = []
    for stage in chain:
        if stage.name in skip:
            reports.append(StageReport(stage.name, [f"{stage.name}: skipped"], skipped=True))
            continue
        if stage.name in redo:
            ctx.store.clear(stage.writes)
        reports.append(run_stage(stage, ctx))
    return reports
