"""Rubric generation (Phase 3): every instance's round-0 rubric, exported for physicians.

No approvals are faked: without physicians every rubric stays at round 0, unapproved, until
feedback is imported (or given in the review app).
"""

from __future__ import annotations

from medrealmm.llm.session import run_with_client
from medrealmm.mccp import unmasked_instances
from medrealmm.pipeline.contract import Stage, StageContext, StageReport
from medrealmm.rubric.exchange import export_round
from medrealmm.rubric.settings import RubricSettings
from medrealmm.rubric.stage import generate_all
from medrealmm.store import stages


class GenerateRubrics(Stage):
    name = "rubric"
    reads = stages.MCCP_INSTANCE
    writes = (stages.RUBRIC_ROUND,)
    agent = "rubric"
    cli = "medrealmm rubric generate"

    def run(self, ctx: StageContext) -> StageReport:
        settings = RubricSettings()
        unmasked = unmasked_instances(ctx.store, "rubric generate")
        client = ctx.client(ctx.settings.models.rubric, unmasked=unmasked)
        stats = run_with_client(client, lambda c: generate_all(ctx.store, c, settings))
        label = "offline baseline" if client.is_baseline else client.name
        folder = ctx.run_dir / "rubric"
        review = folder / "review.jsonl"
        pending = export_round(ctx.store, review, folder / "feedback.jsonl", settings)
        rounds = ctx.store.count(stages.RUBRIC_ROUND)
        line = (
            f"rubrics ({label}): {rounds} rounds, {stats.failed} failed, "
            f"{pending} exported for physician review to {review}"
        )
        return StageReport(self.name, [line], failed=stats.failed)
