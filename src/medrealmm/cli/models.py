"""``medrealmm models``: what a configured server can do, asked rather than guessed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from medrealmm.cli.app import app
from medrealmm.cli.common import ModelsConfigOption, console, plain_row, print_table, user_errors

models_app = typer.Typer(
    help="Inspect configured models: probe structured output, vision and context window.",
    no_args_is_help=True,
)
app.add_typer(models_app, name="models")


@models_app.command("probe")
def probe_command(
    name: Annotated[str, typer.Argument(help="A name from --models-config, or a model id.")],
    models_config: ModelsConfigOption = None,
    run: Annotated[
        Path | None,
        typer.Option("--run", help="Run folder whose store keeps the result per endpoint."),
    ] = None,
    again: Annotated[
        bool, typer.Option("--again", help="Ask the server even if the run store has a result.")
    ] = False,
) -> None:
    """Send three cheap requests (a structured reply, an 8x8 PNG, GET /models) and print what
    the server supports and what a run would use: values the YAML declares win over probes.

    Carries no patient data. With --run the result is kept in that run's store and reused."""
    from medrealmm.llm.config import resolve_spec
    from medrealmm.llm.probe import Capabilities, apply, probe, store_key
    from medrealmm.llm.reach import check_endpoint
    from medrealmm.store import RunStore

    with user_errors():
        spec = resolve_spec(name, models_config)
        if spec.backend == "offline":
            raise ValueError("the offline baseline has no endpoint to probe")
        store = RunStore(run, writer=True, create=False) if run is not None else None
        try:
            cached = store.get_meta(store_key(spec)) if store is not None and not again else None
            if cached is not None:
                caps, origin = Capabilities.model_validate(cached), "from the run store"
            else:
                check_endpoint(spec)
                caps, origin = asyncio.run(probe(spec)), "probed now"
                if store is not None:
                    store.set_meta(store_key(spec), caps.model_dump(mode="json"))
        finally:
            if store is not None:
                store.close()
    used, sources = apply(spec, caps)
    table = Table(title=escape(f"{spec.name} ({caps.model} at {caps.base_url}), {origin}"))
    for column in ("capability", "server", "used", "because"):
        table.add_column(column)
    for field in sources:
        probed = getattr(caps, field)
        plain_row(
            table,
            field,
            "unknown" if probed is None else str(probed),
            str(getattr(used, field)),
            sources[field],
        )
    print_table(table)
    for note in caps.notes:
        console.print(f"  note: {escape(note)}")
