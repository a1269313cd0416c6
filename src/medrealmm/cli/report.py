"""``medrealmm report``: tables, figures and the HTML page from a finished run."""

from __future__ import annotations

from contextlib import ExitStack
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from medrealmm.cli.app import app
from medrealmm.cli.common import RUN_PATH, console, result_console, user_errors
from medrealmm.stats.bootstrap import DEFAULT_RESAMPLES
from medrealmm.stats.weighting import Weighting


class LangChoice(StrEnum):
    zh = "zh"
    en = "en"


@app.command()
def report(
    runstore: Annotated[
        Path,
        typer.Argument(
            help="Run folder, or its store.sqlite, holding evaluation results." + RUN_PATH
        ),
    ],
    out: Annotated[Path, typer.Argument(help="Folder to write index.html, figures/ and tables/.")],
    grader: Annotated[
        str | None,
        typer.Option(
            "--grader",
            help="Grader whose scores are the headline results (default: the run's primary "
            "grader, else the one that scored most).",
        ),
    ] = None,
    add: Annotated[
        list[Path] | None,
        typer.Option(
            "--add",
            help="Another results folder of the same benchmark (repeat): one leaderboard across "
            "every model evaluated in any of them.",
        ),
    ] = None,
    weight: Annotated[
        Weighting,
        typer.Option(
            "--weight",
            help="What a score weighs: case (default: each challenge point alike) or "
            "consultation (each consultation weighs 1: its points averaged first). Every "
            "score table says which it uses.",
        ),
    ] = Weighting.CASE,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap resampling.")] = 0,
    resamples: Annotated[
        int, typer.Option(help="Bootstrap resamples for each 95% confidence interval.")
    ] = DEFAULT_RESAMPLES,
    lang: Annotated[
        LangChoice,
        typer.Option(
            "--lang", help="Language of the page and the per-case pages (tables/ are the same)."
        ),
    ] = LangChoice.zh,
    case_pages: Annotated[
        bool,
        typer.Option(
            "--case-pages/--no-case-pages",
            help="Write cases/, a page per case (off: faster on very large runs).",
        ),
    ] = True,
) -> None:
    """Write the benchmark report of a run: scores with bootstrap 95% CIs, the
    positive/negative decomposition, with vs without images, department / intent / stage /
    image-count / turn breakdowns, per-case histograms and judge agreement (Gwet AC1, kappa).

    OUT gets a self-contained index.html (the leaderboard first, figures embedded, opens from
    disk), cases/ (one page per case: the criteria each model met or missed), figures/*.png
    and tables/*.csv + *.json for every table. Incomplete cases are counted, never scored 0.
    """
    from medrealmm.release.outputs import check_output
    from medrealmm.report import write_report
    from medrealmm.store import RunStore

    with user_errors(), ExitStack() as stack:
        store = stack.enter_context(RunStore(runstore, create=False))
        others = [stack.enter_context(RunStore(p, create=False)) for p in add or []]
        check_output(out, option="OUT", folder=True, stores=[s.path for s in (store, *others)])
        stack.enter_context(console.status("computing tables and drawing figures"))
        result = write_report(
            store,
            out,
            grader=grader,
            seed=seed,
            resamples=resamples,
            others=others,
            lang=lang.value,
            case_pages=case_pages,
            weighting=weight,
        )
    result_console.print(f"[green]report written[/green]: [bold]{result.html}[/bold]")
    result_console.print(
        f"  grader {result.primary_grader or '—'}; {result.scored} scored responses "
        f"({result.incomplete} incomplete); {len(result.figures)} figures; "
        f"{len(result.tables) // 2} tables"
    )
    for (model, images), count in result.stale.items():
        console.print(
            f"[yellow]left out {count} stale scores of {model} ({'img' if images else 'txt'}): "
            "graded against a rubric that no longer applies; rerun `medrealmm eval run`[/yellow]"
        )
