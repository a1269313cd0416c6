"""``medrealmm run``: the whole chain with the models a pipeline YAML names."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer

from medrealmm.cli.app import app
from medrealmm.cli.common import (
    RUN_PATH,
    AllowMassDropOption,
    console,
    print_dry_run,
    result_console,
    user_errors,
    warn_mass_drops,
)

StageList = Annotated[
    list[str] | None,
    typer.Option(help="Stage name; repeat for several (see the list in `medrealmm run --help`)."),
]


@app.command("run")
def run(
    run_dir: Annotated[
        Path, typer.Argument(help="Run folder; created if missing, resumed if not." + RUN_PATH)
    ],
    config: Annotated[
        Path, typer.Option("--config", help="Pipeline YAML (see examples/pipeline.yaml).")
    ],
    skip: StageList = None,
    redo: StageList = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=1,
            help="Only the first N consultations of the input file, through every stage: a "
            "cheap trial against a new endpoint. Overrides the YAML's limit.",
        ),
    ] = None,
    allow_shrink: Annotated[
        bool,
        typer.Option(
            "--allow-shrink",
            help="Rebuild from an input that drops more than half of the consultations this "
            "run holds, with every row made from them (refused without it; or allow_shrink: "
            "true in the YAML).",
        ),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print, per agent, the calls the run would make and their token estimate; "
            "nothing is sent and RUN_DIR is left as it was (the chain runs on a scratch copy, "
            "later agents on the offline baseline's answers; release and report are skipped).",
        ),
    ] = False,
    allow_mass_drop: AllowMassDropOption = False,
) -> None:
    """Run every stage in order: ingest -> corpus -> deid -> review -> mccp -> rubric ->
    evaluate -> release -> report.

    Resumable: finished units are reused from RUN_DIR/store.sqlite, so a killed run picks up
    where it stopped. --skip leaves a stage as it is; --redo clears a stage's rows first so it
    is rebuilt from its input. A stage whose input stage is missing is refused.
    """
    from medrealmm.llm.dryrun import DryRunClient, dry_run_everywhere
    from medrealmm.pipeline import CHAIN, StageContext, load_settings, run_chain
    from medrealmm.pipeline.runner import check_stage_names
    from medrealmm.store import RunStore
    from medrealmm.store.scratch import scratch_run

    planned: list[DryRunClient] = []
    skipped = [*(skip or ()), *(("release", "report") if dry_run else ())]
    with user_errors():
        check_stage_names(CHAIN, skip=skip or (), redo=redo or ())  # before the folder is made
        settings = load_settings(config)
        if limit is not None:
            settings = settings.model_copy(update={"limit": limit})
        if allow_shrink:
            settings = settings.model_copy(update={"allow_shrink": True})
        if not dry_run:
            run_dir.mkdir(parents=True, exist_ok=True)
        with (
            scratch_run(run_dir, enabled=dry_run, must_exist=False) as folder,
            RunStore(folder, writer=True) as store,
            dry_run_everywhere() if dry_run else contextlib.nullcontext([]) as planned,
        ):
            ctx = StageContext(store, folder, settings)
            reports = run_chain(ctx, CHAIN, skip=skipped, redo=redo or ())
    for report in reports:
        for line in report.lines:
            result_console.print(f"  {line}")
    if dry_run:
        result_console.print("[bold]dry run[/bold]: nothing was sent; calls per agent:")
        for client in planned:
            print_dry_run(client, None)
        return
    ran = [report for report in reports if not report.skipped]
    per_stage = ", ".join(f"{report.stage} {report.failed}" for report in ran)
    console.print(f"failed units per stage: {per_stage}")
    warn_mass_drops((loss for report in ran for loss in report.losses), allow=allow_mass_drop)
    failed = sum(report.failed for report in reports)
    if failed:
        console.print(f"[red]{failed} units failed[/red]; rerun to retry them")
        raise typer.Exit(1)
    result_console.print(f"[green]run finished[/green]; outputs in [bold]{run_dir}[/bold]")
