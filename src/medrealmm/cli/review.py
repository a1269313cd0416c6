"""``medrealmm review``: the physician review web app and its accounts."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Annotated

import typer

from medrealmm.cli.app import app
from medrealmm.cli.common import (
    RUN_PATH,
    ModelOption,
    ModelsConfigOption,
    console,
    result_console,
    user_errors,
)
from medrealmm.llm.egress import is_loopback

review_app = typer.Typer(
    help="Web app where physicians and reviewers give rubric feedback, verify de-identification, "
    "validate MCCPs and grade responses, on the same run store as the pipeline.",
    no_args_is_help=True,
)
app.add_typer(review_app, name="review")

StoreOption = Annotated[
    Path,
    typer.Option(
        "--store", help="Run folder (or its store.sqlite) the app reads and writes." + RUN_PATH
    ),
]


@review_app.command("add-user")
def add_user(
    username: Annotated[str, typer.Argument(help="Login name (letters, digits, _ . -).")],
    store: StoreOption,
    role: Annotated[
        list[str],
        typer.Option("--role", help="admin, physician or reviewer; repeat for several roles."),
    ],
    replace: Annotated[
        bool, typer.Option("--replace", help="Reset the password and roles of an existing user.")
    ] = False,
    password_stdin: Annotated[
        bool,
        typer.Option("--password-stdin", help="Read the password from stdin instead of a prompt."),
    ] = False,
) -> None:
    """Create a review-app account; the password is prompted for (never an argument) and stored
    only as an argon2 hash."""
    from medrealmm.review import audit
    from medrealmm.review.accounts import AccountError, create_user, parse_roles
    from medrealmm.store import RunStore

    with user_errors():
        try:
            roles = parse_roles(role)
        except AccountError as exc:
            raise ValueError(str(exc)) from None
        if password_stdin:
            password = typer.get_text_stream("stdin").readline().rstrip("\n")
        else:
            password = getpass.getpass("password: ")
            if getpass.getpass("repeat password: ") != password:
                raise ValueError("the two passwords differ")
        with RunStore(store, create=False) as run_store:
            db = run_store.connection()
            try:
                create_user(db, username, password, roles, replace=replace)
            except AccountError as exc:
                raise ValueError(str(exc)) from None
            audit.record(
                db, "cli", "user_added", username, {"roles": sorted(r.value for r in roles)}
            )
    result_console.print(
        f"[green]user {username} saved[/green] with roles {', '.join(sorted(roles))}"
    )


@review_app.command("export-suspects")
def export_suspects(
    store: StoreOption,
    out: Annotated[Path, typer.Option("--out", help="JSONL file to write.")],
) -> None:
    """Write the near-miss highlights of decided residual-PII tasks, each labelled by whether
    its reviewer marked it as an identifier: dev data for the de-identification recognizers.
    The rows hold masked-corpus text, including what reviewers found still identifying: keep
    the file where the corpus is kept."""
    from medrealmm.release.outputs import check_output
    from medrealmm.review.suspects import export_suspect_labels
    from medrealmm.store import RunStore

    with user_errors(), RunStore(store, create=False) as run_store:
        check_output(out, option="--out", folder=False, stores=[run_store.path])
        count = export_suspect_labels(run_store, out)
    result_console.print(f"[green]{count} judged highlights[/green] written to {out}")


@review_app.command("serve")
def serve(
    store: StoreOption,
    host: Annotated[
        str, typer.Option("--host", help="Interface to listen on; loopback unless you mean it.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    secure_cookies: Annotated[
        bool,
        typer.Option(
            "--secure-cookies", help="Mark cookies Secure (set when served behind HTTPS)."
        ),
    ] = False,
    model: ModelOption = "offline",
    models_config: ModelsConfigOption = None,
    max_rounds: Annotated[
        int, typer.Option("--max-rounds", min=0, help="Refinement rounds after round 0.")
    ] = 3,
    corpus_config: Annotated[
        Path | None,
        typer.Option(
            "--corpus-config",
            help="Corpus YAML used to build the run; its review section (audit seed and "
            "fraction, high-sensitivity departments) drives the de-id audit.",
        ),
    ] = None,
    public_name: Annotated[
        list[str] | None,
        typer.Option(
            "--public-name",
            help="Host name browsers use to reach the app (e.g. behind HTTPS); repeatable. "
            "Requests with any other Host header are refused.",
        ),
    ] = None,
) -> None:
    """Serve the review app over the run store at STORE (uvicorn).

    Physicians and reviewers log in with accounts from `review add-user`. --model names the
    model the rubric Refiner uses when a physician submits feedback (offline baseline by default).
    """
    import uvicorn

    from medrealmm.review import ReviewSettings, create_app
    from medrealmm.store import RunStore

    with user_errors():
        if not is_loopback(host):
            console.print(
                f"[yellow]warning:[/yellow] listening on {host}: patient data becomes reachable "
                "from other machines; put HTTPS in front and use --secure-cookies."
            )
        run_store = RunStore(store, create=False)
        settings = ReviewSettings(
            secure_cookies=secure_cookies,
            model=model,
            models_config=models_config,
            max_rounds=max_rounds,
            corpus_config=corpus_config,
            allowed_hosts=(
                *ReviewSettings.allowed_hosts,
                *([] if is_loopback(host) or host in ("0.0.0.0", "::") else [host]),
                *(public_name or []),
            ),
        )
        web_app = create_app(run_store, settings)
    try:
        uvicorn.run(web_app, host=host, port=port, log_level="info", access_log=False)
    finally:
        run_store.close()
