"""``medrealmm eval compare RESULTS A B``: one paired difference, on stdout."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from medrealmm.cli.common import UNWRAPPED_WIDTH, plain_row, user_errors
from medrealmm.cli.evaluate import RunArgument, Switch, eval_app
from medrealmm.stats.weighting import Weighting
from medrealmm.store import RunStore

ImagesOption = Annotated[
    Switch | None,
    typer.Option(help="Its image condition (default: with images where it was run with them)."),
]


@eval_app.command("compare")
def compare_command(
    run: RunArgument,
    model_a: Annotated[str, typer.Argument(metavar="A", help="First model (the minuend).")],
    model_b: Annotated[str, typer.Argument(metavar="B", help="Second model.")],
    images_a: ImagesOption = None,
    images_b: ImagesOption = None,
    grader: Annotated[
        str | None,
        typer.Option(help="Grader of A's scores (default: the run's primary grader)."),
    ] = None,
    grader_b: Annotated[
        str | None,
        typer.Option(help="Grader of B's scores (default: --grader; another compares graders)."),
    ] = None,
    weight: Annotated[
        Weighting,
        typer.Option(help="case (each challenge point alike) or consultation (each weighs 1)."),
    ] = Weighting.CASE,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and the permutations.")] = 0,
    resamples: Annotated[int, typer.Option(min=1, help="Bootstrap and permutation draws.")] = 2000,
    json_out: Annotated[
        str | None,
        typer.Option("--json", help="Write the result as JSON to this file ('-': stdout)."),
    ] = None,
) -> None:
    """The difference A - B (0-100) on the cases both scored in full, with a 95% CI that
    resamples consultations (paired bootstrap) and a two-sided p-value (a paired sign-flip
    permutation test over consultations). The report's tables/paired_differences.csv holds
    every pair."""
    from medrealmm.evaluate import load_results
    from medrealmm.report.paired import compare_conditions, paired_row

    with user_errors(), RunStore(run, create=False) as store:
        first = load_results(store, grader)
        if first.grader is None:
            raise ValueError(f"no scores in {store.path}; run `medrealmm eval run` first")
        second = first if grader_b is None else load_results(store, grader_b)
        a = _condition(first.headline, model_a, images_a, first.grader)
        b = _condition(second.headline, model_b, images_b, second.grader)
        found = compare_conditions(
            [r for r in first.headline if r.condition == a],
            [r for r in second.headline if r.condition == b],
            seed=seed,
            resamples=resamples,
            weighting=weight,
        )
        if found is None:
            raise ValueError(f"{model_a} and {model_b} share no case scored in full")
    row = paired_row((*a, first.grader), (*b, second.grader), found)
    row["weighting"] = str(weight)
    row["test"] = "paired sign-flip permutation over consultations" + (
        " (exact)" if found.exact else f" ({resamples} draws)"
    )
    if json_out == "-":
        sys.stdout.write(json.dumps(row, ensure_ascii=False, indent=2) + "\n")
        return
    if json_out is not None:
        Path(json_out).write_text(json.dumps(row, ensure_ascii=False, indent=2), encoding="utf-8")
    # results on stdout: fitted to a terminal, never cut in a pipe (as the stderr console)
    out = Console() if sys.stdout.isatty() else Console(soft_wrap=True, width=UNWRAPPED_WIDTH)
    table = Table(
        title="Paired difference A - B (0-100)",
        caption=f"weighting: each {weight} alike; 95% CI: paired bootstrap resampling "
        "consultations; p: " + row["test"],
        box=box.SIMPLE,
        pad_edge=False,
    )
    for column in ("A", "B", "cases", "consultations", "A - B", "95% CI", "p"):
        table.add_column(column, no_wrap=True)
    plain_row(
        table,
        _label(a, first.grader),
        _label(b, second.grader),
        str(found.cases),
        str(found.consultations),
        f"{row['difference']:+.1f}",
        f"{row['ci_low']:+.1f} to {row['ci_high']:+.1f}",
        f"{found.p_value:.4f}",
    )
    out.print(table)


def _label(condition: tuple[str, bool], grader: str) -> str:
    return f"{condition[0]} ({'images' if condition[1] else 'text'}, {grader})"


def _condition(records: list, model: str, images: Switch | None, grader: str) -> tuple[str, bool]:
    """``model``'s condition in ``records``: the one asked for, else with images if run so."""
    modes = {r.images for r in records if r.model == model}
    if not modes:
        known = sorted({r.model for r in records})
        raise ValueError(f"{model!r} has no scores by {grader}; scored: {', '.join(known)}")
    wanted = (True in modes) if images is None else images is Switch.ON
    if wanted not in modes:
        raise ValueError(f"{model!r} was not run with images {'on' if wanted else 'off'}")
    return model, wanted
