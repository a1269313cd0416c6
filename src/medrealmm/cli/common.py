"""Shared CLI plumbing: consistent error output and model options."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from medrealmm.io.errors import DataError

console = Console(stderr=True)

ModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        help="'offline' (the rule-based baseline), a name from --models-config, or a model id "
        "served at OPENAI_BASE_URL.",
    ),
]
ModelsConfigOption = Annotated[
    Path | None,
    typer.Option("--models-config", help="YAML file listing models (see examples/models.yaml)."),
]


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn expected failures into one clear line and exit code 2 instead of a traceback."""
    try:
        yield
    except DataError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    except (FileNotFoundError, ValueError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
