"""``medrealmm eval meta`` and ``eval import-labels``: the grader against physicians."""

from __future__ import annotations

import csv
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.table import Table

from medrealmm.cli.common import (
    ModelsConfigOption,
    console,
    plain_row,
    print_table,
    result_console,
    user_errors,
)
from medrealmm.cli.evaluate import RunArgument, eval_app
from medrealmm.release.outputs import check_output
from medrealmm.store import RunStore

if TYPE_CHECKING:
    from medrealmm.stats.meta_eval import MetaRow

LabelsOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--labels",
        help="JSONL of physician labels, one line per (reply, criterion, physician): "
        '{"instance_id", "model", "images" (default true), "sample" (default 0), '
        '"criterion_id", "physician", "met"}. May be given more than once; the review '
        "app's panel verdicts in RESULTS are always read.",
    ),
]


def _f1(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def show_meta(rows: list[MetaRow], title: str) -> None:
    from medrealmm.stats.meta_eval import ALL, ALL_PHYSICIANS, physician_spread

    spread = physician_spread(rows)
    table = Table(
        title=title,
        caption="balanced F1 = mean of the F1 for 'met' and for 'not met'; each rater against "
        "every physician but itself, items pooled; 95% CI resamples consultations; '—': a "
        "class the rater or the reference never used (no balanced F1, as in simple-evals)"
        + ("" if spread is None else f". Physicians' spread: {spread[0]:.3f}-{spread[1]:.3f}"),
        box=box.SIMPLE,
        pad_edge=False,
        collapse_padding=True,
    )
    undefined = sum(r.balanced_f1 is None for r in rows)
    if undefined:
        table.caption = f"{table.caption}. {undefined} rows have no balanced F1 (a class unused)"
    for column in ("rater", "kind", "items", "pairs", "balanced F1", "95% CI", "F1 met", "F1 not"):
        table.add_column(column, no_wrap=True)
    for r in rows:
        if r.reference != ALL_PHYSICIANS or r.axis != ALL:
            continue
        plain_row(
            table,
            r.rater,
            r.kind,
            str(r.items),
            str(r.pairs),
            _f1(r.balanced_f1),
            f"{_f1(r.f1_low)}-{_f1(r.f1_high)}",
            _f1(r.f1_met),
            _f1(r.f1_not_met),
        )
    print_table(table)


def write_csv(rows: list[MetaRow], path: Path) -> None:
    from medrealmm.report.tables import META_COLUMNS

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(META_COLUMNS), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(asdict(r) for r in rows)


@eval_app.command("meta")
def meta_command(
    run: RunArgument,
    labels: LabelsOption = None,
    csv_out: Annotated[
        Path | None,
        typer.Option(
            "--csv", help="Write every row (by physician, polarity, category) to this CSV."
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap and split seed.")] = 0,
    resamples: Annotated[int, typer.Option("--resamples", min=1)] = 2000,
    calibrate: Annotated[
        bool,
        typer.Option(
            "--calibrate",
            help="Also split the labelled cases in two by consultation (a dialogue's challenge "
            "points on one side), grade the held-out half with --grader "
            "without and with balanced few-shot examples (physician verdicts from the other "
            "half, same category and weight sign) and show both against the physicians.",
        ),
    ] = False,
    grader: Annotated[
        str, typer.Option("--grader", help="Grader for --calibrate ('offline' or a model).")
    ] = "offline",
    models_config: ModelsConfigOption = None,
    per_class: Annotated[
        int, typer.Option("--per-class", min=1, help="Examples per class (met / not met).")
    ] = 2,
) -> None:
    """Meta-evaluation: each grader's criterion verdicts in RESULTS against physicians'
    labels (precision, recall and F1 for 'met' and 'not met', their mean as the headline),
    with each physician against the others as the baseline. By physician, weight sign and
    criterion category in --csv."""
    from medrealmm.evaluate.meta_eval import meta_eval

    with user_errors(), RunStore(run, create=False) as store:
        if csv_out is not None:
            check_output(csv_out, option="--csv", folder=False, stores=[store.path])
        rows = meta_eval(store, labels or (), seed=seed, resamples=resamples)
    if not rows:
        console.print("[yellow]no physician labels on LLM-graded criteria: nothing to compare")
        raise typer.Exit(1)
    show_meta(rows, "Graders and physicians against the physicians (balanced F1)")
    if csv_out is not None:
        write_csv(rows, csv_out)
        result_console.print(f"{len(rows)} rows written to {csv_out}")
    if calibrate:
        from medrealmm.evaluate.calibration import evaluate_calibration

        with user_errors(), RunStore(run, create=False) as store:
            result = evaluate_calibration(
                store,
                labels=labels or (),
                grader=grader,
                models_config=models_config,
                per_class=per_class,
                seed=seed,
                resamples=resamples,
            )
        show_meta(
            result.rows,
            f"Calibration: {result.grader} on {result.held_out_cases} held-out cases, without "
            f"and with examples from {result.calibration_cases} other cases "
            f"({result.examples} labelled verdicts)",
        )
        if result.failed:
            console.print(f"[yellow]{result.failed} grader calls stayed malformed; left out")


@eval_app.command("import-labels")
def import_labels_command(
    run: RunArgument,
    labels: Annotated[Path, typer.Argument(help="JSONL of physician labels (see `eval meta`).")],
) -> None:
    """Store an outside panel's labels in RESULTS as panel verdicts, as the review app would,
    so the report's meta-evaluation section shows them."""
    from medrealmm.evaluate.meta_eval import import_labels

    with user_errors(), RunStore(run, create=False, writer=True) as store:
        count = import_labels(store, labels)
    result_console.print(f"{count} labels stored as panel verdicts")
