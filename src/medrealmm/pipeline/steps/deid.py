"""De-identification (Φdeid): corpus.sampled -> corpus.deid, masked images in the run."""

from __future__ import annotations

from medrealmm.deid.stage import run_deid_stage
from medrealmm.pipeline.contract import Stage, StageContext, StageReport
from medrealmm.store import stages


class Deidentify(Stage):
    name = "deid"
    reads = stages.CORPUS_SAMPLED
    writes = (stages.CORPUS_DEID, stages.DEID_RECORD)
    agent = "deid"
    cli = "medrealmm deid run"

    def run(self, ctx: StageContext) -> StageReport:
        stats = ctx.run_async(
            ctx.settings.models.deid, lambda client: run_deid_stage(ctx.store, ctx.run_dir, client)
        )
        masked = ctx.store.count(stages.CORPUS_DEID)
        line = f"de-identified consultations: {masked} ({stats.failed} failed)"
        return StageReport(self.name, [line], failed=stats.failed)
