"""Commands that belong to no single phase: validate, demo."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from medrealmm.cli.app import app
from medrealmm.cli.common import console, user_errors
from medrealmm.io import iter_jsonl
from medrealmm.schema import Consultation


@app.command()
def validate(
    path: Annotated[Path, typer.Argument(help="Consultations JSONL file to check.")],
) -> None:
    """Check a consultations JSONL file against the schema; errors name file, line and field."""
    with user_errors():
        departments: Counter[str] = Counter()
        for consultation in iter_jsonl(path, Consultation):
            departments[consultation.department] += 1
    table = Table(title=f"{path}: {sum(departments.values())} consultations")
    table.add_column("department")
    table.add_column("count", justify="right")
    for name, count in departments.most_common():
        table.add_row(name, str(count))
    console.print(table)


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
    console.print(f"[green]demo finished[/green]; outputs in [bold]{out}[/bold]")
    for line in summary:
        console.print(f"  {line}")
