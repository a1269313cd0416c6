"""Shared CLI plumbing: consistent error output and model options."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

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
    except (FileNotFoundError, ValueError) as exc:  # DataError is a ValueError
        print_error(str(exc))
        raise typer.Exit(2) from None


def print_error(message: str) -> None:
    """One line on stderr, never wrapped, with data-borne ``[markup]`` shown as written."""
    line = " ".join(message.split())
    console.print(Text.assemble(("error:", "red"), " ", line), soft_wrap=True)
