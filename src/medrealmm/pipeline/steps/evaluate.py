"""Evaluation (Phase 4): every respondent's replies graded against the applicable rubrics."""

from __future__ import annotations

from medrealmm.evaluate import (
    ONLINE,
    EvalSettings,
    load_eval_cases,
    load_results,
    run_evaluation,
)
from medrealmm.evaluate.dryrun import plan_evaluation
from medrealmm.llm.dryrun import collecting
from medrealmm.pipeline.contract import Stage, StageContext, StageReport
from medrealmm.pipeline.settings import PipelineSettings, Respondent
from medrealmm.store import stages

#: Beside the demo's numbers: a first-time reader takes 0.7 for a broken run.
BASELINE_SCALE = (
    "  (scores are 0-100; offline-baseline is a rule-based floor, not a model: a score near "
    "0 means the pipeline ran, and any real model should beat it)"
)


class Evaluate(Stage):
    name = "evaluate"
    reads = stages.RUBRIC_ROUND
    writes = (stages.EVAL_RESPONSE, stages.EVAL_VERDICT, stages.EVAL_SCORE)
    agent = "grader"
    cli = "medrealmm eval run"

    def run(self, ctx: StageContext) -> StageReport:
        settings = ctx.settings
        cases, missing = load_eval_cases(ctx.store)
        if not cases:
            line = f"evaluate: no instances with a rubric yet ({len(missing)} without)"
            return StageReport(self.name, [line])
        dry = collecting()
        if dry is not None:  # a dry chain: the calls each respondent's run would make
            for r in settings.respondents:
                planned, _ = plan_evaluation(ctx.store, self._settings(settings, r))
                dry.extend(planned)
            return StageReport(self.name, [f"evaluate: {len(cases)} instances planned (dry run)"])
        outcomes = [
            run_evaluation(ctx.store, self._settings(settings, r)) for r in settings.respondents
        ]
        first = outcomes[0]
        rows = load_results(ctx.store, first.grader).summary()
        parts = []
        for row in rows:
            mode = "" if row.model == ONLINE else " img" if row.images else " txt"
            shown = "incomplete" if row.score is None else f"{100 * row.score:.1f}"
            parts.append(f"{row.model}{mode} {shown}")
        unapproved = max((row.unapproved_rubrics for row in rows), default=0)
        failed = sum(o.responses.failed + o.verdicts.failed for o in outcomes)
        line = (
            f"evaluate (grader {first.grader}): {first.cases} instances, "
            + ", ".join(parts)
            + f"; {unapproved} rubrics unapproved"
        )
        lines = [line]
        if any(row.is_baseline for row in rows):
            lines.append(BASELINE_SCALE)
        return StageReport(self.name, lines, failed=failed)

    @staticmethod
    def _settings(settings: PipelineSettings, respondent: Respondent) -> EvalSettings:
        return EvalSettings(
            model=respondent.model,
            images=respondent.images,
            grader=settings.models.grader,
            models_config=settings.models_config,
        )
