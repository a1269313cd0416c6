"""The root Typer app; each phase adds its command group in a module of its own."""

from __future__ import annotations

import os

import typer

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
    rich_markup_mode="rich",
)


@app.callback()
def _global_options(
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", min=1, help="Reply budget for every model call (default per task)."
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", min=0.1, help="Seconds to wait for one model call (default 120)."
    ),
) -> None:
    """Options before the command apply to every model the command uses."""
    from medrealmm.llm.config import MAX_TOKENS_ENV, TIMEOUT_ENV

    if max_tokens is not None:
        os.environ[MAX_TOKENS_ENV] = str(max_tokens)
    if timeout is not None:
        os.environ[TIMEOUT_ENV] = str(timeout)
