"""De-identification (Φdeid): corpus.sampled -> corpus.deid, masked images in the run; image
masking (the heavy part) runs on the configured engine and workers."""

from __future__ import annotations

from medrealmm.deid.stage import run_deid_stage
from medrealmm.engines import offload
from medrealmm.pipeline.contract import Stage, StageContext, StageReport
from medrealmm.store import stages


class Deidentify(Stage):
    name = "deid"
    reads = stages.CORPUS_SAMPLED
    writes = (stages.CORPUS_DEID, stages.DEID_RECORD)
    agent = "deid"
    cli = "medrealmm deid run"

    def run(self, ctx: StageContext) -> StageReport:
        settings = ctx.settings
        with offload(settings.engine, settings.workers) as pool:
            stats = ctx.run_async(
                settings.models.deid,
                lambda client: run_deid_stage(
                    ctx.store,
                    ctx.run_dir,
                    client,
                    concurrency=max(2, 2 * pool.workers),  # keep every worker fed
                    offload=pool,
                ),
            )
        masked = ctx.store.count(stages.CORPUS_DEID)
        line = f"de-identified consultations: {masked} ({stats.failed} failed)"
        return StageReport(self.name, [line], failed=stats.failed)
