"""MCCP extraction (Phase 2): the de-identified corpus -> mccp.instance / mccp.discarded."""

from __future__ import annotations

from medrealmm.mccp import export_outputs, run_mccp
from medrealmm.pipeline.contract import Stage, StageContext, StageReport
from medrealmm.pipeline.settings import PipelineSettings
from medrealmm.store import stages


class ExtractMccp(Stage):
    name = "mccp"
    reads = stages.CORPUS_DEID
    writes = (stages.MCCP_INSTANCE, stages.MCCP_DISCARDED)
    agent = "mccp"
    cli = "medrealmm mccp extract"

    def source(self, settings: PipelineSettings) -> str:
        """corpus.deid by default; corpus.final once physicians approved the corpus."""
        return settings.mccp_input

    def run(self, ctx: StageContext) -> StageReport:
        source = self.source(ctx.settings)
        summary = ctx.run_async(
            ctx.settings.models.mccp,
            lambda client: run_mccp(
                ctx.store,
                client,
                source_stage=source,
                points=ctx.settings.mccp_points,
                min_gap=ctx.settings.mccp_min_gap,
                points_slice=ctx.settings.mccp_points_slice,
            ),
        )
        export_outputs(ctx.store, ctx.run_dir / "mccp")
        losses = [summary.loss()]
        return StageReport(self.name, summary.lines(), failed=summary.failed, losses=losses)
