"""The chain's last two steps: a release of the de-identified work, and the report."""

from __future__ import annotations

from medrealmm.pipeline.contract import Stage, StageContext, StageReport
from medrealmm.release.demo import release_demo
from medrealmm.report import write_report
from medrealmm.store import stages


class Release(Stage):
    """Writes RUN/release/; refuses (and says so) when nothing de-identified is releasable."""

    name = "release"
    reads = stages.CORPUS_DEID
    writes = ()
    cli = "medrealmm release build"

    def run(self, ctx: StageContext) -> StageReport:
        allow, dua = ctx.settings.release.allow_unreviewed, ctx.settings.release.dua
        line = release_demo(ctx.store, ctx.run_dir, allow_unreviewed=allow, dua=dua)
        return StageReport(self.name, [line])


class Report(Stage):
    """Writes RUN/report/ (HTML, figures, tables) from the primary grader's scores."""

    name = "report"
    reads = stages.EVAL_SCORE
    writes = ()
    cli = "medrealmm report"

    def run(self, ctx: StageContext) -> StageReport:
        report = write_report(ctx.store, ctx.run_dir / "report")
        line = (
            f"report: {report.html} ({len(report.figures)} figures, "
            f"{report.scored} scored responses, {report.incomplete} incomplete)"
        )
        return StageReport(self.name, [line])
