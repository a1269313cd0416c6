"""Commands that belong to no single phase: validate, demo."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from medrealmm.cli.app import app
from medrealmm.cli.common import print_table, result_console, user_errors
from medrealmm.io.dataset import DEFAULT_MAX_PIXELS, check_dataset


@app.command()
def validate(
    path: Annotated[
        Path, typer.Argument(help="Consultations JSONL file, or a dataset folder holding one.")
    ],
    max_pixels: Annotated[
        int,
        typer.Option(
            "--max-pixels", min=1, help="Largest image accepted (width x height), before decoding."
        ),
    ] = DEFAULT_MAX_PIXELS,
) -> None:
    """Check everything later stages need: schema, unique ids, event time order, and every
    image present, inside the dataset folder, under the pixel cap and decodable. Errors name
    file, line and field."""
    with user_errors():
        summary = check_dataset(path, max_pixels=max_pixels)
    title = f"{summary.path}: {summary.departments.total()} consultations, {summary.images} images"
    table = Table(title=Text(title))
    table.add_column("department")
    table.add_column("count", justify="right")
    for name, count in summary.departments.most_common():
        table.add_row(Text(name), str(count))
    print_table(table)


@app.command()
def demo(
    out: Annotated[
        Path, typer.Option("--out", help="Folder for every output of the demo run.")
    ] = Path("demo-output"),
) -> None:
    """Run the whole pipeline offline on the bundled synthetic demo corpus.

    Uses the deterministic offline baseline for every agent, writes the run store, the
    per-stage outputs and the report under OUT, and is safe to rerun: finished work is
    reused from the run store.
    """
    from medrealmm.pipeline import run_demo

    with user_errors():
        summary = run_demo(out)
    result_console.print(f"[green]demo finished[/green]; outputs in [bold]{out}[/bold]")
    for line in summary:
        result_console.print(f"  {line}")
