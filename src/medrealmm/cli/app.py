"""The root Typer app; each phase adds its command group in a module of its own."""

from __future__ import annotations

import os

import typer


def _flags_without_types() -> None:
    """Typer prints a type beside every option, ``<bool>`` included; an on/off flag takes no
    value, so its help shows none."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_flags_plain", False):
        return

    def display_type_rich(self: TyperOption, ctx: typer.Context) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    display_type_rich._flags_plain = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_without_types()


def _print_version(value: bool) -> None:
    if value:
        from medrealmm._version import __version__

        typer.echo(f"medrealmm {__version__}")
        raise typer.Exit()


app = typer.Typer(
    name="medrealmm",
    help=(
        "Build and run MedRealMM-style benchmarks: real-world, multimodal Chinese online "
        "medical consultation. Every LLM step runs on the deterministic offline baseline by "
        "default, or on any OpenAI-compatible server (--model NAME with OPENAI_BASE_URL / "
        "OPENAI_API_KEY, or a models.yaml)."
    ),
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # locals may hold patient text
    rich_markup_mode="markdown",
)


@app.callback()
def _global_options(
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", min=1, help="Reply budget for every model call (default per task)."
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", min=0.1, help="Seconds to wait for one model call (default 120)."
    ),
    quiet: bool = typer.Option(
        False,
        "--quiet",
        "-q",
        help="No progress bars or notes on stderr; results (stdout) and errors still print.",
    ),
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """Options before the command apply to every model the command uses."""
    from medrealmm.cli.common import set_quiet
    from medrealmm.llm.config import MAX_TOKENS_ENV, TIMEOUT_ENV

    set_quiet(quiet)
    if max_tokens is not None:
        os.environ[MAX_TOKENS_ENV] = str(max_tokens)
    if timeout is not None:
        os.environ[TIMEOUT_ENV] = str(timeout)
