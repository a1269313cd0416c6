"""Shared CLI plumbing: consistent error output and model options."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from medrealmm.losses import Loss

#: Width of output that goes to a pipe or a file: wide enough that no line or table is cut.
UNWRAPPED_WIDTH = 10_000


def make_console(terminal: bool, stderr: bool = True) -> Console:
    """A CLI console. On a terminal rich fits its width; in a pipe or a file (CI logs,
    ``| tee``) it would wrap every line at 80 columns, mid-sentence, and cut table headers,
    so there nothing wraps and tables keep their natural width. ``COLUMNS`` wins in both
    cases."""
    if terminal or os.environ.get("COLUMNS"):
        return Console(stderr=stderr)
    return Console(stderr=stderr, soft_wrap=True, width=UNWRAPPED_WIDTH)


#: Results (tables, summaries, "report written: ...") go to stdout, so `> file` and pipes
#: get the answer; progress, warnings and notes go to ``console`` on stderr.
result_console = make_console(sys.stdout.isatty(), stderr=False)
#: Progress, warnings and notes (stderr); ``--quiet`` silences it.
console = make_console(sys.stderr.isatty())
#: Errors (stderr), printed even under ``--quiet``.
error_console = make_console(sys.stderr.isatty())


def set_quiet(quiet: bool) -> None:
    """``--quiet``: no progress bars or notes on stderr; results and errors still print."""
    from medrealmm.runner import PROGRESS_ENV

    console.quiet = quiet
    if quiet:
        os.environ[PROGRESS_ENV] = "0"


#: Said by every argument that names a run: how a path is read (``store.runstore.store_file``).
RUN_PATH = (
    " Always a folder, dotted names too (results-0.2); only a path ending in .sqlite, or an "
    "existing SQLite file, is the store file itself."
)

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

LimitOption = Annotated[
    int | None,
    typer.Option("--limit", min=1, help="Only the first N units by id (a trial run)."),
]

AllowShrinkOption = Annotated[
    bool,
    typer.Option(
        "--allow-shrink",
        help="Rebuild from an input that drops more than half of the consultations this run "
        "holds, with every row made from them (refused without it).",
    ),
]

AllowMassDropOption = Annotated[
    bool,
    typer.Option(
        "--allow-mass-drop",
        help="Exit 0 even when a step drops or fails more than half of its input (it is "
        "still warned about); without it such a run exits 1.",
    ),
]

DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Print the calls this would make per agent (to make vs answered from the cache), "
        "estimated prompt tokens, the max_tokens bound and the cost if the YAML has prices; "
        "call no model, write nothing.",
    ),
]
DebugCallsOption = Annotated[
    bool,
    typer.Option(
        "--debug-calls",
        help="Keep the raw text of replies that failed validation in the run store (table "
        "llm_rejected) and show them in the failure summary. They may hold patient text; on "
        "`deid run` that text is UNMASKED. It stays in the local run store, never in logs.",
    ),
]


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn expected failures into one clear line and exit code 2 instead of a traceback."""
    try:
        yield
    except (FileNotFoundError, FileExistsError, ValueError) as exc:  # DataError: a ValueError
        print_error(str(exc))
        raise typer.Exit(2) from None


def warn_mass_drops(losses: Iterable[Loss], *, allow: bool) -> None:
    """Warn about every step that lost more than half its input; exit 1 unless ``allow``."""
    from medrealmm.losses import mass_losses

    heavy = mass_losses(losses)
    for loss in heavy:
        console.print(Text.assemble(("warning:", "yellow"), " ", loss.warning()), soft_wrap=True)
    if heavy and not allow:
        print_error(
            "most of a step's input was lost (see the warnings above); check its inputs, "
            "screens and model, or pass --allow-mass-drop if this is meant"
        )
        raise typer.Exit(1)


def plain_row(table: Table, *cells: object) -> None:
    """A table row whose text is shown as written: a model or grader name may hold ``[``,
    ``]`` or ``\\`` (``judge[grouped]``), which rich would read as markup and drop."""
    table.add_row(*(Text(cell) if isinstance(cell, str) else cell for cell in cells))


def print_table(table: Table, target: Console | None = None) -> None:
    """A result table (stdout), and on a terminal too narrow for it (rich then cuts cells
    with '…') a note on stderr: how wide it needs to be and how to see it whole."""
    target = target or result_console
    target.print(table)
    needed = target.measure(table, options=target.options.update_width(UNWRAPPED_WIDTH)).maximum
    if target.is_terminal and needed > target.width:
        console.print(
            f"[dim](cut to fit {target.width} columns: this table needs {needed}; widen the "
            "terminal, or pipe the output, e.g. `| less -S`)[/dim]"
        )


def print_error(message: str) -> None:
    """One line on stderr, never wrapped, with data-borne ``[markup]`` shown as written."""
    line = " ".join(message.split())
    error_console.print(Text.assemble(("error:", "red"), " ", line), soft_wrap=True)


def print_dry_run(client: object, resumed: int | None) -> None:
    """The plan a ``DryRunClient`` collected, after the units the store already holds
    (``None``: already printed, for the second model of one run)."""
    from rich.markup import escape

    if resumed is not None:
        result_console.print(f"units already done (resumed, no calls): {resumed}")
    for line in client.lines():  # type: ignore[attr-defined]
        result_console.print(escape(line), soft_wrap=True)


def report_failures(
    errors: Iterable[str], what: str, raw: Sequence[tuple[str, str, str]] = ()
) -> int:
    """Print failures grouped by reason, each group with its fix; return how many there were.

    Callers exit non-zero when this is not 0, so scripts notice work that is still missing.
    ``raw``: (task, model, text) of rejected replies, shown only when ``--debug-calls`` asked.
    """
    from rich.markup import escape

    from medrealmm.llm.failures import summarise

    groups = summarise(errors)
    total = sum(group.count for group in groups)
    if total:
        error_console.print(f"[yellow]{total} {what} failed:[/yellow]")
    for group in groups:
        error_console.print(f"  {group.count} x {group.reason}: {escape(group.fix)}")
        error_console.print(f"    e.g. {escape(group.example[:200])}")
    show_rejected(raw)
    return total


def show_rejected(raw: Sequence[tuple[str, str, str]]) -> None:
    """The raw replies ``--debug-calls`` kept, one line each (cut at 500 characters)."""
    if raw:
        error_console.print(
            f"{len(raw)} raw replies that failed validation (kept in the run store):"
        )
    for task, model, text in raw:
        error_console.print(Text.assemble(f"  {task} / {model}: ", " ".join(text.split())[:500]))
