"""The root Typer app; each phase adds its command group in a module of its own."""

from __future__ import annotations

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
