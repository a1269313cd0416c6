"""``medrealmm rubric``: Phase 3 case-specific rubrics and the physician refinement loop."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from medrealmm.cli.app import app
from medrealmm.cli.common import (
    RUN_PATH,
    DebugCallsOption,
    DryRunOption,
    LimitOption,
    ModelOption,
    ModelsConfigOption,
    console,
    print_dry_run,
    print_table,
    report_failures,
    result_console,
    user_errors,
)
from medrealmm.llm import LLMClient
from medrealmm.llm.session import open_client, run_with_client
from medrealmm.mccp import unmasked_instances
from medrealmm.release.outputs import check_output
from medrealmm.runner import RunStats
from medrealmm.store import RunStore, stages

rubric_app = typer.Typer(
    help="Phase 3: generate a case-specific rubric per instance (Generator), export each round "
    "for physicians, import their structured feedback, refine (Refiner) until a round's "
    "feedback is empty. Every round is kept.",
    no_args_is_help=True,
)
app.add_typer(rubric_app, name="rubric")

RunDir = Annotated[Path, typer.Argument(help="Run folder holding store.sqlite." + RUN_PATH)]
ConcurrencyOption = Annotated[int, typer.Option(min=1, help="Instances processed at once.")]
MaxRoundsOption = Annotated[
    int, typer.Option("--max-rounds", min=0, help="Refinement rounds after round 0 (paper: 3).")
]
ImagesOption = Annotated[
    bool, typer.Option(help="Send the patient images to the agents (vision models).")
]


def _open(run: Path, *, writer: bool = False) -> RunStore:
    return RunStore(run, writer=writer, create=False)


def _client(
    store: RunStore, model: str, models_config: Path | None, step: str, *, dry_run: bool
) -> LLMClient:
    """The step's client over the run's cache; under --dry-run a ``DryRunClient`` stands in."""
    from medrealmm.llm import resolve_spec
    from medrealmm.llm.dryrun import DryRunClient

    client = open_client(
        model,
        models_config,
        store.cache,
        unmasked=unmasked_instances(store, step),
        meta=store,
        probe=not dry_run,
    )
    if dry_run:
        client = DryRunClient(client, resolve_spec(model, models_config), store.cache)
    return client


def _report(
    stats: RunStats,
    what: str,
    recorded: dict[str, str] | None = None,
    raw: list[tuple[str, str, str]] | None = None,
) -> None:
    """One line of counts that agree with the failures listed after it; exit 1 if any.

    ``recorded``: failures the stage stored as rows (its units then count as run, not ok).
    """
    recorded = recorded or {}
    ok = max(stats.done - len(recorded), 0)
    failed = stats.failed + len(recorded)
    result_console.print(f"{what}: {ok} done, {failed} failed, {stats.skipped} already done")
    for key in sorted([*stats.errors, *recorded]):
        console.print(f"  [red]{key}[/red]")
    if report_failures([*stats.errors.values(), *recorded.values()], "units", raw or ()):
        raise typer.Exit(1)


@rubric_app.command()
def generate(
    run: RunDir,
    model: ModelOption = "offline",
    models_config: ModelsConfigOption = None,
    concurrency: ConcurrencyOption = 8,
    platform_limit: Annotated[
        int, typer.Option(min=1, help="The platform's per-turn character limit.")
    ] = 500,
    images: ImagesOption = True,
    limit: LimitOption = None,
    dry_run: DryRunOption = False,
    debug_calls: DebugCallsOption = False,
) -> None:
    """Generate round 0 (Generator phi_R(x, y_orig)) for every MCCP instance without one.

    Adds the case's length limit as a rule-based criterion and flags criteria worded too
    closely to the online reply. Resumable: finished instances are skipped.
    """
    from medrealmm.rubric import RubricSettings
    from medrealmm.rubric.stage import generate_all
    from medrealmm.store.scratch import scratch_run

    with (
        user_errors(),
        scratch_run(run, enabled=dry_run) as run_dir,
        _open(run_dir, writer=True) as store,
    ):
        settings = RubricSettings(platform_char_limit=platform_limit, with_images=images)
        client = _client(store, model, models_config, "rubric generate", dry_run=dry_run)
        store.cache.keep_rejected = debug_calls
        stats = run_with_client(
            client,
            lambda c: generate_all(store, c, settings, concurrency=concurrency, limit=limit),
        )
        failures = store.failures(stages.RUBRIC_ROUND)
    if dry_run:
        print_dry_run(client, stats.skipped)
        return
    _report(stats, f"rubric round 0 ({client.name})", failures, store.cache.rejected_now)


@rubric_app.command("export-round")
def export_round_command(
    run: RunDir,
    out: Annotated[
        Path | None,
        typer.Option(help="Folder for review.jsonl and feedback.jsonl (default RUN/rubric)."),
    ] = None,
) -> None:
    """Export every round awaiting review: review.jsonl (case, criteria, overlap flags, changes
    since the previous round) and feedback.jsonl, a template physicians fill in (one line per
    case; "items": [] approves the round)."""
    from medrealmm.rubric import RubricSettings
    from medrealmm.rubric.exchange import export_round

    folder = out or run / "rubric"
    with user_errors(), _open(run) as store:
        check_output(folder, option="--out", folder=True, stores=[store.path])
        n = export_round(
            store, folder / "review.jsonl", folder / "feedback.jsonl", RubricSettings()
        )
    result_console.print(f"{n} rubric rounds await review: {folder / 'review.jsonl'}")
    result_console.print(f"fill in and import: {folder / 'feedback.jsonl'}")


@rubric_app.command("import-feedback")
def import_feedback_command(
    run: RunDir,
    feedback_file: Annotated[Path, typer.Argument(help="Filled-in feedback JSONL.")],
    reviewer: Annotated[
        str | None, typer.Option(help="Reviewer id for lines that name none.")
    ] = None,
) -> None:
    """Import physicians' structured feedback. Every line is checked first (criterion ids,
    latest round, not yet approved); errors name file, line and field, and nothing is saved.
    Empty feedback approves the round as the final rubric."""
    from medrealmm.rubric.exchange import import_feedback

    with user_errors(), _open(run, writer=True) as store:
        saved = import_feedback(store, feedback_file, reviewer=reviewer)
    approved = sum(f.approves for f in saved)
    result_console.print(
        f"imported feedback for {len(saved)} rounds: {approved} approved, "
        f"{len(saved) - approved} to refine"
    )


@rubric_app.command()
def refine(
    run: RunDir,
    model: ModelOption = "offline",
    models_config: ModelsConfigOption = None,
    concurrency: ConcurrencyOption = 8,
    max_rounds: MaxRoundsOption = 3,
    images: ImagesOption = True,
    limit: LimitOption = None,
    dry_run: DryRunOption = False,
) -> None:
    """Run the Refiner phi'_R(x, R^(k), F^(k)) on every round with non-empty feedback,
    writing round k+1 (up to --max-rounds). The Refiner never sees the online reply."""
    from medrealmm.rubric import RubricSettings
    from medrealmm.rubric.stage import refine_all
    from medrealmm.store.scratch import scratch_run

    with (
        user_errors(),
        scratch_run(run, enabled=dry_run) as folder,  # run itself unless --dry-run
        _open(folder, writer=True) as store,
    ):
        settings = RubricSettings(max_rounds=max_rounds, with_images=images)
        client = _client(store, model, models_config, "rubric refine", dry_run=dry_run)
        stats = run_with_client(
            client,
            lambda c: refine_all(store, c, settings, concurrency=concurrency, limit=limit),
        )
    if dry_run:
        print_dry_run(client, stats.skipped)
        return
    _report(stats, f"rubric refinement ({client.name})")


@rubric_app.command()
def status(
    run: RunDir,
    instance: Annotated[
        str | None, typer.Option(help="Show one instance's rounds and the diff between them.")
    ] = None,
    max_rounds: MaxRoundsOption = 3,
) -> None:
    """Where every instance stands in the loop; with --instance, its full history."""
    from medrealmm.rubric import RubricSettings, diff_rubrics, round_history, states
    from medrealmm.rubric.overlap import OVERLAP_TAG

    with user_errors(), _open(run) as store:
        if instance is None:
            counts = Counter(states(store, RubricSettings(max_rounds=max_rounds)).values())
            table = Table(title=f"rubrics in {run}")
            table.add_column("state")
            table.add_column("instances", justify="right")
            for state, n in sorted(counts.items()):
                table.add_row(state.value, str(n))
            print_table(table)
            return
        rounds = round_history(store, instance)
        if not rounds:
            raise ValueError(f"no rubric rounds for instance {instance!r}")
        for index, rubric in enumerate(rounds):
            result_console.print(
                f"[bold]round {rubric.round}[/bold] ({len(rubric.criteria)} criteria)"
            )
            if index:
                for line in diff_rubrics(rounds[index - 1], rubric).lines():
                    result_console.print(f"  {line}", markup=False)
            else:
                for c in rubric.criteria:
                    flag = " [reference wording]" if OVERLAP_TAG in c.tags else ""
                    result_console.print(f"  {c.id} [{c.weight:+d}] {c.text}{flag}", markup=False)
