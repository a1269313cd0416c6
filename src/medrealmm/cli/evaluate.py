"""``medrealmm eval``: run a model over the benchmark, grade every criterion, and score."""

from __future__ import annotations

import json
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from medrealmm.cli.app import app
from medrealmm.cli.common import ModelOption, ModelsConfigOption, console, user_errors
from medrealmm.store import RunStore

eval_app = typer.Typer(
    help="Phase 4: generate physician replies with a model (images on or off), grade them "
    "criterion by criterion against each instance's rubric, and score. Runs are resumable.",
    no_args_is_help=True,
)
app.add_typer(eval_app, name="eval")


class Switch(StrEnum):
    ON = "on"
    OFF = "off"


RunArgument = Annotated[
    Path,
    typer.Argument(help="Run folder (or its store.sqlite) holding instances and rubrics."),
]
GraderOption = Annotated[
    str,
    typer.Option(
        "--grader",
        help="Grader model: 'offline' (the lexical baseline), a name from --models-config, "
        "or a model id served at OPENAI_BASE_URL.",
    ),
]


@eval_app.command("run")
def run_command(
    run: RunArgument = Path("demo-output"),
    model: ModelOption = "offline",
    images: Annotated[
        Switch, typer.Option("--images", help="Send patient images inline (on) or withhold them.")
    ] = Switch.ON,
    k: Annotated[
        int,
        typer.Option(
            "--k",
            min=1,
            help="Samples per instance for mean-of-k and worst-of-k; sample i > 0 is sent "
            "with seed i, so give the model a sampling temperature in --models-config.",
        ),
    ] = 1,
    grader: GraderOption = "offline",
    grader_images: Annotated[
        Switch, typer.Option("--grader-images", help="Whether the grader sees the images.")
    ] = Switch.ON,
    models_config: ModelsConfigOption = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N instances.")
    ] = None,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="Ask again for empty replies and for verdicts still malformed after retries.",
        ),
    ] = False,
) -> None:
    """Generate replies with MODEL ('online' scores the original physician reply), grade
    every criterion with the grader, and store case scores. Rerun to resume: finished
    calls are never repeated."""
    from medrealmm.evaluate import EvalSettings, run_evaluation

    settings = EvalSettings(
        model=model,
        images=images is Switch.ON,
        k=k,
        grader=grader,
        models_config=models_config,
        grader_images=grader_images is Switch.ON,
        limit=limit,
        retry_failed=retry_failed,
    )
    with user_errors(), RunStore(run) as store:
        outcome = run_evaluation(store, settings)
    complete = len(outcome.scores) - outcome.incomplete
    console.print(
        f"[green]{outcome.model}[/green] ({'images' if outcome.images else 'text only'}) "
        f"on {outcome.cases} instances, graded by {outcome.grader}: "
        f"{complete} cases scored, {outcome.incomplete} incomplete"
    )
    if outcome.no_rubric:
        console.print(f"[yellow]{len(outcome.no_rubric)} instances have no rubric yet[/yellow]")
    for stats, what in ((outcome.responses, "replies"), (outcome.verdicts, "verdicts")):
        if stats.failed:
            console.print(f"[yellow]{stats.failed} {what} failed; rerun to retry calls[/yellow]")


def _points(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


@eval_app.command("score")
def score_command(
    run: RunArgument = Path("demo-output"),
    grader: Annotated[
        str | None,
        typer.Option("--grader", help="Grader whose verdicts to report (default: the only one)."),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the table and usage as JSON here.")
    ] = None,
) -> None:
    """Print Score(M) per model and image setting (0-100), mean-of-k, worst-of-k, the
    positive/negative decomposition, incomplete cases, and calls/tokens per model and stage."""
    from medrealmm.evaluate import baseline_models, graders, load_scores, summarize
    from medrealmm.llm import resolve_spec

    with user_errors(), RunStore(run) as store:
        known = graders(store)
        if not known:
            raise ValueError(f"no scores in {store.path}; run `medrealmm eval run` first")
        if grader is None:
            if len(known) > 1:
                raise ValueError(f"several graders scored this run; pick one of {known}")
            grader = known[0]
        grader = resolve_spec(grader).name  # 'offline' names the baseline
        if grader not in known:
            raise ValueError(f"no scores by grader {grader!r}; known: {known}")
        rows = summarize(load_scores(store, grader), baselines=baseline_models(store))
        usage = store.usage()
    unapproved = max(row.unapproved_rubrics for row in rows)
    table = Table(
        title=f"Scores (0-100, grader {grader})",
        caption="* rule-based baseline, not a model. +met / -hit: positive criteria met and "
        "negative criteria triggered per case"
        + (f". {unapproved} instances scored on unapproved rubrics" if unapproved else ""),
        box=box.SIMPLE,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("model", no_wrap=True)
    for column in ("img", "score", "mean@k", "worst@k", "k", "+met", "-hit", "scored", "incompl"):
        table.add_column(column, justify="right", no_wrap=True)
    for row in rows:
        name = f"{row.model}*" if row.is_baseline else row.model
        table.add_row(
            name,
            "on" if row.images else "off",
            _points(row.score),
            _points(row.mean_of_k),
            _points(row.worst_of_k),
            str(row.k),
            "-" if row.positive_met_mean is None else f"{row.positive_met_mean:.2f}",
            "-" if row.negative_triggered_mean is None else f"{row.negative_triggered_mean:.2f}",
            str(row.complete),
            str(row.incomplete),
        )
    console.print(table)
    spend = Table(title="Calls and tokens", box=box.SIMPLE, pad_edge=False, collapse_padding=True)
    for column in ("stage", "model", "calls", "cached", "prompt tok", "completion tok"):
        spend.add_column(column, no_wrap=True)
    for entry in usage:
        spend.add_row(*(str(entry[name]) for name in entry))
    console.print(spend)
    if json_out is not None:
        payload = {"grader": grader, "rows": [asdict(r) for r in rows], "usage": usage}
        json_out.write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
