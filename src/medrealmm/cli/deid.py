"""``medrealmm deid``: mask identifiers in consultation text and images."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from medrealmm.cli.app import app
from medrealmm.cli.common import (
    RUN_PATH,
    DebugCallsOption,
    DryRunOption,
    LimitOption,
    ModelOption,
    ModelsConfigOption,
    console,
    print_dry_run,
    print_table,
    result_console,
    show_rejected,
    user_errors,
)
from medrealmm.engines import Engine

deid_app = typer.Typer(
    help="De-identify consultations (paper 6.2): typed placeholders in text, solid black boxes "
    "on images, EXIF stripped.",
    no_args_is_help=True,
)
app.add_typer(deid_app, name="deid")


@deid_app.command("run")
def run(
    run_dir: Annotated[Path, typer.Argument(help="Run folder holding store.sqlite." + RUN_PATH)],
    model: ModelOption = "offline",
    models_config: ModelsConfigOption = None,
    no_llm: Annotated[
        bool, typer.Option("--no-llm", help="Rules only; skip the LLM pass.")
    ] = False,
    concurrency: Annotated[int, typer.Option(help="Consultations in flight at once.")] = 2,
    engine: Annotated[
        Engine, typer.Option("--engine", help="Where images are masked: local or ray.")
    ] = Engine.LOCAL,
    workers: Annotated[
        int, typer.Option("--workers", min=1, help="Processes / Ray CPUs masking images.")
    ] = 1,
    limit: LimitOption = None,
    debug_calls: DebugCallsOption = False,
    dry_run: DryRunOption = False,
) -> None:
    """Mask corpus.sampled into corpus.deid, masked images under RUN_DIR/deid/.

    Refused until `corpus build` has written corpus.sampled (raw is never read).
    Resumable: consultations already de-identified are skipped. --dry-run masks on a scratch
    copy (images included, so it takes as long as the rules do) to count the LLM pass's calls.
    """
    from medrealmm.deid.stage import run_deid_stage
    from medrealmm.engines import offload
    from medrealmm.llm import resolve_spec
    from medrealmm.llm.dryrun import DryRunClient
    from medrealmm.llm.session import open_client, run_with_client
    from medrealmm.store import RunStore, stages
    from medrealmm.store.scratch import scratch_run

    if dry_run and no_llm:
        raise typer.BadParameter("--dry-run counts LLM calls; --no-llm makes none")
    with (
        user_errors(),
        scratch_run(run_dir, enabled=dry_run) as folder,  # run_dir itself unless --dry-run
        RunStore(folder, writer=True, create=False) as store,
    ):
        client = (
            None
            if no_llm
            else open_client(
                model,
                models_config,
                store.cache,
                unmasked="deid LLM pass",
                meta=store,
                probe=not dry_run,
            )
        )
        if dry_run and client is not None:
            client = DryRunClient(client, resolve_spec(model, models_config), store.cache)
        store.cache.keep_rejected = debug_calls
        with offload(engine, workers) as pool:
            stats = run_with_client(
                client,
                lambda client: run_deid_stage(
                    store,
                    folder,
                    client,
                    concurrency=max(concurrency, 2 * pool.workers),
                    offload=pool,
                    limit=limit,
                ),
            )
        if dry_run:
            print_dry_run(client, stats.skipped)
            return
        result_console.print(
            f"corpus.deid: {store.count(stages.CORPUS_DEID)} consultations "
            f"({stats.done} new, {stats.skipped} already done, {stats.failed} failed)"
        )
        for key, error in sorted(stats.errors.items()):
            console.print(f"  [red]{key}[/red]: {error}")
        show_rejected(store.cache.rejected_now)
    if stats.failed:
        raise typer.Exit(1)


@deid_app.command("text")
def text(
    value: Annotated[str, typer.Argument(help="Chinese text to mask (your own input).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print spans as JSON.")] = False,
) -> None:
    """Mask one piece of text (rules and the NER model) and show the typed spans found."""
    from medrealmm.deid.text import mask_text

    masked, spans = mask_text(value)
    if as_json:
        typer.echo(
            json.dumps(
                {"masked": masked, "spans": [s.model_dump(mode="json") for s in spans]},
                ensure_ascii=False,
            )
        )
        return
    typer.echo(masked)
    table = Table("type", "start", "end", "recognizer")
    for span in spans:
        table.add_row(span.type.value, str(span.start), str(span.end), span.source)
    print_table(table)


@deid_app.command("image")
def image(
    source: Annotated[Path, typer.Argument(help="Image to mask.")],
    target: Annotated[Path, typer.Argument(help="Where to write the masked, metadata-free copy.")],
) -> None:
    """Mask one image and list every black box drawn."""
    from medrealmm.deid.stage import mask_image_file
    from medrealmm.release.outputs import check_output

    with user_errors():
        if not source.is_file():
            raise FileNotFoundError(f"image not found: {source}")
        check_output(target, option="TARGET", folder=False, inputs=[source])
        record = mask_image_file(source, target, source.name)
    table = Table("kind", "label", "box")
    for box in record.boxes:
        table.add_row(box.kind, box.label or "", str(box.box))
    print_table(table)
    result_console.print(
        f"{len(record.boxes)} boxes in {record.seconds:.2f}s; face detector: {record.face_detector}"
    )
    for note in record.needs_review:
        console.print(f"[yellow]review:[/yellow] {note}")
    for near in record.near_misses:  # where and why, never the text read there
        console.print(f"[yellow]near-miss left unmasked:[/yellow] {near.label} at {near.box}")
