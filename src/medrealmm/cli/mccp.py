"""``medrealmm mccp``: Phase 2 extraction and its physician validation round trip."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medrealmm.cli.app import app
from medrealmm.cli.common import (
    RUN_PATH,
    AllowMassDropOption,
    AllowShrinkOption,
    DebugCallsOption,
    DryRunOption,
    LimitOption,
    ModelOption,
    ModelsConfigOption,
    console,
    print_dry_run,
    result_console,
    show_rejected,
    user_errors,
    warn_mass_drops,
)
from medrealmm.demo import CORPUS_FILE
from medrealmm.mccp.selection import DEFAULT_MIN_GAP
from medrealmm.release.outputs import check_output
from medrealmm.store import RunStore, stages

mccp_app = typer.Typer(
    help="Phase 2: find each consultation's Multimodal Clinical Challenge Point (MCCP), cut it "
    "into a benchmark instance, label intent and stage, and validate a sample with physicians.",
    no_args_is_help=True,
)
app.add_typer(mccp_app, name="mccp")

OutArgument = Annotated[Path, typer.Argument(help="Run folder holding store.sqlite." + RUN_PATH)]


def _load_corpus(store: RunStore, corpus: Path, allow_shrink: bool) -> None:
    """Ingest CORPUS/consultations.jsonl as the raw stage; refuse a different corpus."""
    from medrealmm.pipeline.steps.ingest import load_raw

    load_raw(store, corpus, allow_shrink=allow_shrink)


@mccp_app.command()
def extract(
    corpus: Annotated[
        Path, typer.Argument(help=f"Folder with {CORPUS_FILE} and the images/ it references.")
    ],
    out: Annotated[
        Path, typer.Argument(help="Run folder; created if missing, resumed if not." + RUN_PATH)
    ],
    model: ModelOption = "offline",
    models_config: ModelsConfigOption = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Consultations processed at once.")] = 16,
    intent_taxonomy: Annotated[
        Path | None, typer.Option(help="YAML intent taxonomy (default: the bundled one).")
    ] = None,
    stage_taxonomy: Annotated[
        Path | None, typer.Option(help="YAML stage taxonomy (default: the bundled one).")
    ] = None,
    verifier_images: Annotated[
        bool, typer.Option(help="Send patient images to the Verifier (vision models only).")
    ] = True,
    source: Annotated[
        str,
        typer.Option(
            "--from",
            help="Corpus stage to read: corpus.deid (default), corpus.final once physicians "
            "approved it, or raw / corpus.sampled for un-masked experiments (never released).",
        ),
    ] = stages.CORPUS_DEID,
    points: Annotated[
        int,
        typer.Option(
            "--points",
            min=1,
            help="Challenge points per consultation: 1 is the paper's single t*; k > 1 also "
            "takes the next-ranked admitted turns (same s_A + s_M ranking), each its own "
            "instance. Reports then resample consultations, not instances.",
        ),
    ] = 1,
    points_slice: Annotated[
        int | None,
        typer.Option(
            "--points-slice",
            min=1,
            help="Only the first N consultations (by id) take --points; the rest one.",
        ),
    ] = None,
    min_gap: Annotated[
        int,
        typer.Option(
            "--min-gap",
            min=1,
            help="Fewest turns between two challenge points of one consultation.",
        ),
    ] = DEFAULT_MIN_GAP,
    limit: LimitOption = None,
    allow_shrink: AllowShrinkOption = False,
    dry_run: DryRunOption = False,
    debug_calls: DebugCallsOption = False,
    allow_mass_drop: AllowMassDropOption = False,
) -> None:
    """Extract MCCPs per consultation: Cropper over the whole dialogue, Verifier over the
    history up to each candidate, t* = argmax of the summed scores (with --points k, up to k
    turns by that ranking, --min-gap turns apart).

    Reads the corpus stage named by --from and refuses to run when OUT/ does not hold it
    (CORPUS/ is ingested as raw first). Writes instances and discard reasons to the run store and
    to OUT/mccp/{instances,discarded}.jsonl. Safe to rerun: finished consultations are reused.
    """
    from medrealmm.llm import resolve_spec
    from medrealmm.llm.dryrun import DryRunClient
    from medrealmm.llm.egress import UNMASKED_STAGES
    from medrealmm.llm.session import open_client, run_with_client
    from medrealmm.mccp import export_outputs, load_taxonomy, run_mccp
    from medrealmm.mccp.extract import finished_consultations
    from medrealmm.store.scratch import scratch_run

    with user_errors():
        check_output(out, option="OUT", folder=True)
    with (
        user_errors(),
        scratch_run(out, enabled=dry_run, must_exist=False) as run_dir,
        RunStore(run_dir, writer=True) as store,
    ):
        _load_corpus(store, corpus, allow_shrink)
        spec = resolve_spec(model, models_config)
        unmasked = f"mccp extract --from {source}" if source in UNMASKED_STAGES else None
        client = open_client(
            spec, models_config, store.cache, unmasked=unmasked, meta=store, probe=not dry_run
        )
        if dry_run:
            client = DryRunClient(client, spec, store.cache)
            resumed = len(finished_consultations(store))
        store.cache.keep_rejected = debug_calls
        summary = run_with_client(
            client,
            lambda client: run_mccp(
                store,
                client,
                source_stage=source,
                intent_taxonomy=load_taxonomy(intent_taxonomy) if intent_taxonomy else None,
                stage_taxonomy=load_taxonomy(stage_taxonomy) if stage_taxonomy else None,
                verifier_images=verifier_images,
                concurrency=concurrency,
                limit=limit,
                points=points,
                min_gap=min_gap,
                points_slice=points_slice,
            ),
        )
        if dry_run:
            print_dry_run(client, resumed)
            return
        instances, discarded = export_outputs(store, store.path.parent / "mccp")
    if client.is_baseline:
        console.print("[yellow]agents ran on the offline baseline (rules, not a model)[/yellow]")
    for line in summary.lines():
        result_console.print(line)
    for key, error in sorted(summary.errors.items()):
        console.print(f"[red]failed[/red] {key}: {error}")
    show_rejected(store.cache.rejected_now)
    result_console.print(f"wrote {instances} and {discarded}")
    warn_mass_drops([summary.loss()], allow=allow_mass_drop)
    if summary.failed:
        raise typer.Exit(1)


@mccp_app.command("export-validation")
def export_validation(
    out: OutArgument,
    n: Annotated[int, typer.Option("--n", min=1, help="How many MCCPs to sample.")] = 200,
    seed: Annotated[int, typer.Option(help="Sampling seed; same seed, same sample.")] = 0,
    to: Annotated[
        Path | None, typer.Option(help="CSV to write (default OUT/mccp/validation.csv).")
    ] = None,
) -> None:
    """Draw a seeded sample of N MCCPs and write a CSV for physicians to accept or reject.

    Each row shows the dialogue up to t* and the physician's actual next reply; reviewers fill
    the `decision` column with accept/reject (or 接受/拒绝) and their id in `reviewer`.
    """
    from medrealmm.mccp import export_validation_csv

    target = to or out / "mccp" / "validation.csv"
    with user_errors(), RunStore(out, create=False, writer=True) as store:
        check_output(target, option="--to", folder=False, stores=[store.path])
        count = export_validation_csv(store, target, n, seed)
    result_console.print(f"wrote {count} MCCPs for validation to {target}")


@mccp_app.command("import-validation")
def import_validation(
    out: OutArgument,
    decisions: Annotated[Path, typer.Argument(help="The filled-in validation CSV.")],
    reviewer: Annotated[
        str | None, typer.Option(help="Reviewer id for rows whose `reviewer` cell is empty.")
    ] = None,
) -> None:
    """Record physicians' accept/reject decisions and report the MCCP acceptance rate."""
    from medrealmm.mccp import import_validation_csv

    with user_errors(), RunStore(out, create=False, writer=True) as store:
        summary = import_validation_csv(store, decisions, reviewer)
    for line in summary.lines():
        result_console.print(line)
