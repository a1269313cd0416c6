"""Corpus construction (Phase 1): raw -> corpus.sampled, and the Φ_rev review queue."""

from __future__ import annotations

from medrealmm.corpus import ReviewConfig, build_corpus
from medrealmm.corpus import review as review_queue
from medrealmm.corpus.manifest import corpus_losses
from medrealmm.pipeline.contract import Stage, StageContext, StageReport
from medrealmm.pipeline.steps.ingest import ingested_file
from medrealmm.store import stages


class CorpusBuild(Stage):
    name = "corpus"
    reads = stages.RAW
    writes = (stages.CORPUS_SAMPLED, stages.CORPUS_DROPPED, stages.CORPUS_PRIVACY)
    agent = "privacy"
    cli = "medrealmm corpus build"

    def run(self, ctx: StageContext) -> StageReport:
        settings = ctx.settings
        privacy = settings.corpus.privacy.model_copy(update={"model": settings.models.privacy})
        config = settings.corpus.model_copy(update={"privacy": privacy})
        manifest = build_corpus(
            ingested_file(ctx.store),
            ctx.run_dir,
            config,
            engine=settings.engine,
            workers=settings.workers,
            models_config=settings.models_config,
            store=ctx.store,
            limit=settings.limit,  # the same first N records ingest loaded
            validate=False,  # ingest checked this file (its hash is verified) and the shrink
        )
        first, last = manifest.stages[0], manifest.stages[-1]
        dropped = sum(sum(stage.dropped.values()) for stage in manifest.stages)
        line = f"corpus: {first.input} raw -> {last.output} sampled, {dropped} dropped with reasons"
        return StageReport(self.name, [line], losses=corpus_losses(manifest))


class ReviewQueue(Stage):
    """Queue Φ_rev tasks for the masked corpus; physicians decide them (CLI or review app)."""

    name = "review"
    reads = stages.CORPUS_DEID
    writes = (stages.CORPUS_REVIEW_TASK,)
    cli = "medrealmm corpus review"

    def run(self, ctx: StageContext) -> StageReport:
        config = ctx.settings.corpus.review or ReviewConfig()
        added = review_queue.enqueue(ctx.store, config)
        status = review_queue.advance(ctx.store, config)
        line = (
            f"review queue: {added} tasks added; {status.approved} approved,"
            f" {status.pending_cases} cases awaiting physicians"
        )
        return StageReport(self.name, [line])
