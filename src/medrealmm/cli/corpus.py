"""``medrealmm corpus``: build the corpus (Phase 1) and run its human review queue."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from medrealmm.cli.app import app
from medrealmm.cli.common import (
    RUN_PATH,
    AllowMassDropOption,
    AllowShrinkOption,
    DryRunOption,
    ModelsConfigOption,
    print_dry_run,
    print_table,
    result_console,
    user_errors,
    warn_mass_drops,
)
from medrealmm.corpus import CorpusConfig, Engine, Manifest, build_corpus, load_config
from medrealmm.corpus import review as queue
from medrealmm.corpus.manifest import corpus_losses
from medrealmm.store import RunStore, stages

corpus_app = typer.Typer(
    help="Phase 1: filter, balance and screen raw consultations; review the masked corpus.",
    no_args_is_help=True,
)
review_app = typer.Typer(
    help="Φ_rev review queue: two passes per case, full review of sensitive departments, "
    "second-annotator audit. The web app works on the same queue.",
    no_args_is_help=True,
)
corpus_app.add_typer(review_app, name="review")
app.add_typer(corpus_app, name="corpus")

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", help="Corpus YAML (completeness, balance, privacy, review)."),
]
RunDir = Annotated[Path, typer.Argument(help="Run folder holding store.sqlite." + RUN_PATH)]


@corpus_app.command()
def build(
    input_path: Annotated[Path, typer.Argument(help="Raw consultations JSONL (C0).")],
    out: Annotated[
        Path, typer.Argument(help="Run folder for the store, corpus and manifest." + RUN_PATH)
    ],
    config_path: ConfigOption = None,
    engine: Annotated[
        Engine, typer.Option("--engine", help="local processes, or Ray Data for big corpora.")
    ] = Engine.LOCAL,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Processes / Ray CPUs (default: all).")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Balancing seed.")] = None,
    cap: Annotated[
        int | None, typer.Option("--cap", min=1, help="Most cases kept per department.")
    ] = None,
    target_total: Annotated[
        int | None,
        typer.Option("--target-total", min=1, help="Derive the cap for about this many cases."),
    ] = None,
    min_per_department: Annotated[
        int | None,
        typer.Option("--min-per-department", min=0, help="Long-tail floor (with replacement)."),
    ] = None,
    with_replacement: Annotated[
        bool | None,
        typer.Option(
            "--with-replacement/--no-replacement",
            help="Top small departments up to the floor with copies.",
        ),
    ] = None,
    privacy_model: Annotated[
        str | None,
        typer.Option(
            "--privacy-model",
            help="Stage-4a screening agent: 'offline' (baseline), a model name, or 'none'.",
        ),
    ] = None,
    models_config: ModelsConfigOption = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Only the first N lines of the input (a trial run)."),
    ] = None,
    allow_shrink: AllowShrinkOption = False,
    dry_run: DryRunOption = False,
    allow_mass_drop: AllowMassDropOption = False,
) -> None:
    """Run C0 -Φimg-> C1 -Φcmpl-> C2 -Φbal-> C3 -4a-> C3' and print what each step dropped.

    Writes OUT/store.sqlite (stages corpus.sampled, corpus.dropped), OUT/corpus.sampled.jsonl,
    OUT/corpus.dropped.jsonl and OUT/manifest.json. Output is identical for either engine.
    """
    from medrealmm.llm.dryrun import dry_run_everywhere
    from medrealmm.release.outputs import check_output
    from medrealmm.store.scratch import scratch_run

    with (
        user_errors(),
        scratch_run(out, enabled=dry_run, must_exist=False) as folder,  # out unless --dry-run
        dry_run_everywhere() if dry_run else contextlib.nullcontext([]) as planned,
    ):
        check_output(out, option="OUT", folder=True)
        config = _with_overrides(
            load_config(config_path),
            seed=seed,
            cap=cap,
            target_total=target_total,
            min_per_department=min_per_department,
            with_replacement=with_replacement,
            privacy_model=privacy_model,
        )
        manifest = build_corpus(
            input_path,
            folder,
            config,
            engine=engine,
            workers=workers,
            models_config=models_config,
            limit=limit,
            allow_shrink=allow_shrink,
        )
    if dry_run:
        for client in planned:  # the 4a screening agent, when it has cases to screen
            print_dry_run(client, None)
        if not planned:
            result_console.print(
                "dry run: no model would be called (no screening agent or no cases)"
            )
        return
    print_manifest(manifest)
    result_console.print(f"[green]corpus written[/green] to [bold]{out}[/bold]")
    warn_mass_drops(corpus_losses(manifest), allow=allow_mass_drop)


def _with_overrides(
    config: CorpusConfig,
    *,
    seed: int | None,
    cap: int | None,
    target_total: int | None,
    min_per_department: int | None,
    with_replacement: bool | None,
    privacy_model: str | None,
) -> CorpusConfig:
    balance = config.balance.model_dump()
    for name, value in (
        ("seed", seed),
        ("cap", cap),
        ("target_total", target_total),
        ("min_per_department", min_per_department),
        ("with_replacement", with_replacement),
    ):
        if value is not None:
            balance[name] = value
    privacy = config.privacy.model_dump()
    if privacy_model is not None:
        privacy["model"] = None if privacy_model.lower() == "none" else privacy_model
    data = config.model_dump() | {"balance": balance, "privacy": privacy}
    return CorpusConfig.model_validate(data)


def print_manifest(manifest: Manifest) -> None:
    stages_table = Table(title="corpus construction")
    for column in ("operator", "in", "out", "dropped by reason"):
        stages_table.add_column(column, justify="right" if column in ("in", "out") else "left")
    for stage in manifest.stages:
        reasons = ", ".join(f"{k}={v}" for k, v in stage.dropped.items()) or "-"
        if stage.added_copies:
            reasons += f" (+{stage.added_copies} copies)"
        stages_table.add_row(stage.operator.value, str(stage.input), str(stage.output), reasons)
    print_table(stages_table)
    snapshots = ("C0", "C1", "C2", "C3", "C3'")
    departments = Table(title="departments before / after")
    departments.add_column("department")
    for snap in snapshots:
        departments.add_column(snap, justify="right")
    for name, counts in sorted(manifest.departments.items(), key=lambda kv: -kv[1]["C0"]):
        departments.add_row(name, *(str(counts.get(snap, 0)) for snap in snapshots))
    print_table(departments)
    if manifest.privacy_backend_is_baseline:
        result_console.print(
            f"4a screening agent: {manifest.privacy_backend} (rule-based baseline)"
        )


# -- review queue ----------------------------------------------------------------------
@review_app.command("queue")
def review_queue(
    run: RunDir,
    config_path: ConfigOption = None,
    source_stage: Annotated[
        str, typer.Option("--source-stage", help="Store stage holding the cases to review.")
    ] = stages.CORPUS_DEID,
) -> None:
    """Queue both review passes for every case of the de-identified corpus (idempotent)."""
    with user_errors(), RunStore(run, create=False, writer=True) as store:
        config = load_config(config_path)
        if not store.count(source_stage):
            raise ValueError(f"stage {source_stage!r} in {store.path} has no cases to review")
        added = queue.enqueue(store, config.review, source_stage)
        status = queue.advance(store, config.review)
    result_console.print(f"queued {added} new review tasks")
    print_status(status)


@review_app.command("export")
def review_export(
    run: RunDir,
    sheet: Annotated[Path, typer.Argument(help="JSONL file to write, one task a line.")],
    include_decided: Annotated[
        bool, typer.Option("--all", help="Also export decided tasks with their decisions.")
    ] = False,
) -> None:
    """Write open review tasks to a JSONL sheet; fill reviewer/verdict/note and import it."""
    with user_errors(), RunStore(run, create=False) as store:
        count = queue.export_sheet(store, sheet, include_decided=include_decided)
    result_console.print(f"exported {count} tasks to {sheet}")


@review_app.command("import")
def review_import(
    run: RunDir,
    sheet: Annotated[Path, typer.Argument(help="JSONL sheet with decisions filled in.")],
    config_path: ConfigOption = None,
) -> None:
    """Record reviewers' decisions, plan the audit when due, finalize decided cases."""
    with user_errors(), RunStore(run, create=False, writer=True) as store:
        config = load_config(config_path)
        count = queue.import_sheet(store, sheet)
        status = queue.advance(store, config.review)
    result_console.print(f"recorded {count} decisions")
    print_status(status)


@review_app.command("status")
def review_status(run: RunDir, config_path: ConfigOption = None) -> None:
    """Show review progress (and advance the queue if the audit is due)."""
    with user_errors(), RunStore(run, create=False, writer=True) as store:
        status = queue.advance(store, load_config(config_path).review)
    print_status(status)


def print_status(status: queue.ReviewStatus) -> None:
    table = Table(title="review queue")
    table.add_column("round/pass")
    table.add_column("decided", justify="right")
    table.add_column("total", justify="right")
    for label, total in status.tasks.items():
        table.add_row(label, str(status.decided.get(label, 0)), str(total))
    print_table(table)
    result_console.print(
        f"approved {status.approved}, rejected {status.rejected}, pending {status.pending_cases};"
        f" audited cases {status.audit_planned}, audit disagreements"
        f" {status.audit_disagreements}"
    )
    # what reviewers fixed by hand is what de-identification missed: the number to watch
    result_console.print(
        f"reviewer-added spans {status.added_spans}, image boxes {status.added_boxes}"
    )
