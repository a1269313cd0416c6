"""``medrealmm eval``: run a model over the benchmark, grade every criterion, and score."""

from __future__ import annotations

import json
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from medrealmm.cli.app import app
from medrealmm.cli.common import (
    RUN_PATH,
    DebugCallsOption,
    DryRunOption,
    ModelOption,
    ModelsConfigOption,
    console,
    plain_row,
    print_dry_run,
    print_table,
    report_failures,
    result_console,
    user_errors,
)
from medrealmm.release.outputs import check_output
from medrealmm.stats.weighting import Weighting, weighted_mean
from medrealmm.store import RunStore

if TYPE_CHECKING:
    from medrealmm.evaluate.results import Abstentions, PanelSummary, Results
    from medrealmm.evaluate.scoring import ModelSummary
    from medrealmm.stats.cases import CaseRecord

eval_app = typer.Typer(
    help="Phase 4: generate physician replies with a model (images on or off), grade them "
    "criterion by criterion against each instance's rubric, and score. Runs are resumable.",
    no_args_is_help=True,
)
app.add_typer(eval_app, name="eval")


class Switch(StrEnum):
    ON = "on"
    OFF = "off"


class AbstainChoice(StrEnum):
    UNMET = "unmet"
    DROP = "drop"
    INCOMPLETE = "incomplete"


class PanelChoice(StrEnum):
    MAJORITY = "majority"
    UNANIMOUS = "unanimous"
    ANY = "any"
    WEIGHTED = "weighted"


class GradingChoice(StrEnum):
    PER_CRITERION = "per-criterion"
    GROUPED = "grouped"


#: --k, --grader-images and --abstain: one rule (evaluate.provenance.RECORDED_SETTINGS).
KEPT_ON_RESUME = (
    " Recorded in the evaluation's spec: left out on a resumed run, the recorded value is "
    "kept; a different one is refused."
)

RunArgument = Annotated[
    Path,
    typer.Argument(
        help="Run folder (or its store.sqlite) holding instances and rubrics." + RUN_PATH
    ),
]
GraderOption = Annotated[
    str,
    typer.Option(
        "--grader",
        help="Grader model: 'offline' (the lexical baseline), a name from --models-config, "
        "or a model id served at OPENAI_BASE_URL.",
    ),
]


SourceArgument = Annotated[
    Path,
    typer.Argument(
        help="What to evaluate: a release folder (or a Hugging Face copy of one), or a "
        "builder's run folder holding instances and rubrics."
    ),
]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Run folder for the results. Required for a release (read-only); for a builder's "
        "run, omit it to store results in that run." + RUN_PATH,
    ),
]


@eval_app.command("run")
def run_command(
    source: SourceArgument = Path("demo-output"),
    out: OutOption = None,
    model: ModelOption = "offline",
    images: Annotated[
        Switch, typer.Option("--images", help="Send patient images inline (on) or withhold them.")
    ] = Switch.ON,
    k: Annotated[
        int | None,
        typer.Option(
            "--k",
            min=1,
            help="Samples per instance for mean-of-k and worst-of-k (default 1); sample i > 0 "
            "is sent with seed i, so give the model a sampling temperature in "
            "--models-config." + KEPT_ON_RESUME,
        ),
    ] = None,
    grader: Annotated[
        list[str] | None,
        typer.Option(
            "--grader",
            help="Grader model: 'offline' (the lexical baseline), a name from --models-config, "
            "or a model id served at OPENAI_BASE_URL. Repeat it for a judge panel (each "
            "grader's verdicts are its own rows; the panel's verdict is derived from them), "
            "or name a panel of --models-config (panels: [{name, graders, method, weights}]).",
        ),
    ] = None,
    panel: Annotated[
        PanelChoice | None,
        typer.Option(
            "--panel",
            help="How a panel's verdicts make one: majority (default) or weighted (a vote; a "
            "tie is the score-minimising verdict: not met for a positive criterion, met for a "
            "negative one), unanimous (met only if every grader says met), any (met if one "
            "does). A grader that cannot assess does not vote. Weights come from the panel "
            "in --models-config (1 each otherwise).",
        ),
    ] = None,
    abstain: Annotated[
        AbstainChoice | None,
        typer.Option(
            "--abstain",
            help="What a 'cannot assess' verdict (unreadable image, missing context) counts "
            "as: unmet (default: v=0, the paper's denominator), drop (left out of numerator "
            "and denominator; a case with nothing left is incomplete) or incomplete (the case "
            "gets no score). A failed or malformed grader call is never an abstention."
            + KEPT_ON_RESUME,
        ),
    ] = None,
    grading: Annotated[
        GradingChoice,
        typer.Option(
            "--grading",
            help="per-criterion (default, as in the paper: one grader call per criterion) or "
            "grouped (all of a reply's criteria in one call, a structured list back; stored "
            "as grader 'NAME[grouped]' beside the per-criterion verdicts).",
        ),
    ] = GradingChoice.PER_CRITERION,
    grader_images: Annotated[
        Switch | None,
        typer.Option(
            "--grader-images",
            help="Whether the grader sees the images (default on)." + KEPT_ON_RESUME,
        ),
    ] = None,
    models_config: ModelsConfigOption = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N instances.")
    ] = None,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="Ask again for empty replies and for verdicts still malformed after retries.",
        ),
    ] = False,
    debug_calls: DebugCallsOption = False,
    dry_run: DryRunOption = False,
) -> None:
    """Generate replies with MODEL ('online' scores the original physician reply), grade
    every criterion with the grader, and store case scores. Rerun to resume: finished
    calls are never repeated, and only criteria changed since are graded again.

    A release is checked first (DUA accepted, every checksum) and never written to."""
    from medrealmm.evaluate import EvalSettings, run_evaluation
    from medrealmm.evaluate.panel import panel_from_graders
    from medrealmm.evaluate.scoring import AbstainPolicy
    from medrealmm.evaluate.source import results_store
    from medrealmm.release.dua import DUANotAccepted

    with user_errors():
        single, judges = panel_from_graders(
            grader or [], None if panel is None else panel.value, models_config
        )
    settings = EvalSettings(
        model=model,
        images=images is Switch.ON,
        k=k,
        grader=single or "offline",
        models_config=models_config,
        grader_images=None if grader_images is None else grader_images is Switch.ON,
        limit=limit,
        retry_failed=retry_failed,
        abstain=None if abstain is None else AbstainPolicy(abstain.value),
        grading=grading.value,  # type: ignore[arg-type]
        panel=judges,
    )
    with user_errors():
        try:
            store, benchmark = results_store(source, out, writer=not dry_run)
        except DUANotAccepted as exc:
            raise ValueError(str(exc)) from None
        with store:
            if dry_run:
                from medrealmm.evaluate.dryrun import plan_evaluation

                clients, resumed = plan_evaluation(store, settings)
                for i, client in enumerate(clients):
                    print_dry_run(client, None if i else resumed)
                return
            store.cache.keep_rejected = debug_calls
            outcome = run_evaluation(store, settings)
            raw = store.cache.rejected_now
    if benchmark is not None:
        version = f" {benchmark.ref.version}" if benchmark.ref.version else ""
        result_console.print(
            f"benchmark: {benchmark.ref.kind} {benchmark.ref.name or ''}{version} "
            f"({len(benchmark.instances)} instances); results in {store.path.parent}"
        )
    complete = len(outcome.scores) - outcome.incomplete
    result_console.print(
        f"[green]{escape(outcome.model)}[/green] ({'images' if outcome.images else 'text only'}) "
        f"on {outcome.cases} instances, graded by {escape(outcome.grader)}: "
        f"{complete} cases scored, {outcome.incomplete} incomplete"
        + (f", {outcome.refusals} refusals (scored 0)" if outcome.refusals else "")
    )
    if outcome.no_rubric:
        console.print(f"[yellow]{len(outcome.no_rubric)} instances have no rubric yet[/yellow]")
    for member in outcome.members:
        result_console.print(
            f"  panel member {escape(member.grader)}: {member.verdicts.done} graded now, "
            f"{member.verdicts.skipped} already done, {member.verdicts.failed} failed"
        )
    abstained = sum(score.abstained for score in outcome.scores)
    if abstained:
        result_console.print(
            f"{abstained} criteria the grader could not assess (--abstain {outcome.abstain})"
        )
    errors = list(outcome.responses.errors.values())
    for score in [s for m in outcome.members for s in m.scores] or outcome.scores:
        errors.extend(v.error for v in score.verdicts if v.error is not None)
    failed = report_failures(errors, "calls", raw)
    if failed or outcome.incomplete:
        console.print(
            "rerun to retry transient failures; --retry-failed also asks again for "
            "permanent and malformed ones"
        )
        raise typer.Exit(1)


@eval_app.command("import-responses")
def import_command(
    run: RunArgument,
    replies: Annotated[
        Path,
        typer.Argument(help='JSONL, one line per instance: {"instance_id": ..., "reply": ...}.'),
    ],
    name: Annotated[
        str, typer.Option("--name", help="Row name for the replies, e.g. 'physicians-deliberate'.")
    ],
    images: Annotated[
        Switch, typer.Option("--images", help="Whether the replies' authors saw the images.")
    ] = Switch.ON,
    grader: GraderOption = "offline",
    grader_images: Annotated[
        Switch | None,
        typer.Option(
            "--grader-images",
            help="Whether the grader sees the images (default on)." + KEPT_ON_RESUME,
        ),
    ] = None,
    models_config: ModelsConfigOption = None,
    max_reply_bytes: Annotated[
        int,
        typer.Option(
            "--max-reply-bytes", min=1, help="Largest reply accepted, in UTF-8 bytes (1 MB)."
        ),
    ] = 1_000_000,
) -> None:
    """Score replies produced elsewhere (the paper's Table 3: deliberative physicians; or a
    model run on your own inference stack) with the run's rubrics and grader, as row NAME.
    RUN is a results folder made by `eval run` (or a builder's run)."""
    from medrealmm.evaluate.imported import import_responses

    with user_errors(), RunStore(run, create=False, writer=True) as store:
        outcome = import_responses(
            store,
            replies,
            name,
            images=images is Switch.ON,
            grader=grader,
            models_config=models_config,
            grader_images=None if grader_images is None else grader_images is Switch.ON,
            max_reply_bytes=max_reply_bytes,
        )
    complete = len(outcome.scores) - outcome.incomplete
    result_console.print(
        f"[green]{outcome.model}[/green]: {len(outcome.scores) - outcome.responses.failed} "
        f"replies imported, graded by {outcome.grader}: {complete} cases scored, "
        f"{outcome.incomplete} incomplete"
    )
    if outcome.responses.failed:
        console.print(
            f"[yellow]{outcome.responses.failed} instances have no reply in {replies}; "
            "they are listed as incomplete[/yellow]"
        )


def _points(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


@eval_app.command("score")
def score_command(
    run: RunArgument = Path("demo-output"),
    grader: Annotated[
        str | None,
        typer.Option(
            "--grader",
            help="Grader whose verdicts to report (default: the run's primary grader).",
        ),
    ] = None,
    common: Annotated[
        bool,
        typer.Option(
            "--common",
            help="Score every row on the cases all rows scored (rows on different case sets "
            "are marked † otherwise).",
        ),
    ] = False,
    json_out: Annotated[
        str | None,
        typer.Option(
            "--json",
            help="Also write the table and usage as JSON to this file; '-' writes only the "
            "JSON, to stdout.",
        ),
    ] = None,
    weight: Annotated[
        Weighting,
        typer.Option(
            "--weight",
            help="What the score column weighs: case (default: each challenge point alike) "
            "or consultation (each consultation weighs 1: its points averaged first).",
        ),
    ] = Weighting.CASE,
) -> None:
    """Print Score(M) per model and image setting (0-100), mean@k, worst@k, the
    positive/negative decomposition, incomplete and stale cases, and calls/tokens. The same
    numbers the report shows: both read medrealmm.evaluate.load_results."""
    from medrealmm.evaluate import K_DEFINITIONS, load_results
    from medrealmm.evaluate.results import abstentions_by_grader, panel_summary, usage_with_cost

    with user_errors(), RunStore(run, create=False) as store:
        if json_out is not None:
            check_output(json_out, option="--json", folder=False, stores=[store.path])
        results = load_results(store, grader)
        if results.grader is None:
            raise ValueError(f"no scores in {store.path}; run `medrealmm eval run` first")
        sets = results.case_sets()
        differ = len(set(sets.values())) > 1
        if common:
            results = results.common()
        rows = results.summary()
        if weight is Weighting.CONSULTATION:
            rows = [_by_consultation(row, results.headline) for row in rows]
        usage = usage_with_cost(store)
        abstentions = abstentions_by_grader(store)
        panel = panel_summary(store, results)
    imported = results.imported()
    marked = {c for c, cases in sets.items() if differ and not common and cases != max_set(sets)}
    if json_out != "-":
        show_summary(results.grader, rows, results.stale_by_condition(), weight, imported, marked)
        if common:
            console.print(
                f"compared on the {len(results.shared_cases())} cases every row scored "
                f"(of {len(frozenset().union(*sets.values()))})"
            )
        elif marked:
            console.print(
                f"[yellow]† rows scored on a different set of cases; `--common` compares all "
                f"rows on the {len(results.shared_cases())} cases every row scored[/yellow]"
            )
        show_evaluations(results)
        if any(a.abstained for a in abstentions):
            show_abstentions(abstentions)
        if panel is not None:
            show_panel(panel)
        show_usage(usage)
    if json_out is not None:
        payload = {
            "grader": results.grader,
            "weighting": str(weight),
            "definitions": K_DEFINITIONS,
            "common": common,
            "shared_cases": len(results.shared_cases()),
            "rows": [
                {
                    **asdict(r),
                    "imported": (r.model, r.images) in imported,
                    "cases": len(sets.get((r.model, r.images), ())),
                    "different_cases": (r.model, r.images) in marked,
                }
                for r in rows
            ],
            "stale": [
                {"model": m, "images": i, "scores": n}
                for (m, i), n in results.stale_by_condition().items()
            ],
            "evaluations": [
                spec.model_dump(mode="json")
                for spec in results.specs.values()
                if any(r.eval_id == spec.eval_id for r in results.records)
            ],
            "usage": usage,
            "abstentions": [asdict(a) for a in abstentions],
            "panel": None if panel is None else asdict(panel),
        }
        text = json.dumps(payload, ensure_ascii=False, indent=2)
        if json_out == "-":
            typer.echo(text)
        else:
            Path(json_out).write_text(text + "\n", encoding="utf-8")


@eval_app.command("export")
def export_command(
    run: RunArgument,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="File to write; its suffix picks the format: .jsonl, .parquet, or .eval (an "
            "inspect_ai log that `inspect view` opens).",
        ),
    ],
    grader: Annotated[
        str | None,
        typer.Option("--grader", help="Grader whose verdicts to export (default: the primary)."),
    ] = None,
) -> None:
    """Write one row per reply: case and consultation id, model, images on/off, sample, reply
    text, latency and tokens, each criterion's verdict with its rationale and weight, the
    case score (0-100) and whether it is complete. Reads what `eval score` reads."""
    from medrealmm.evaluate.export import write_export

    with user_errors(), RunStore(run, create=False) as store:
        if out.is_dir() or out.resolve() == store.path.resolve():
            raise ValueError(f"{out} is a folder or the run store; name a new file")
        count = write_export(store, out, grader)
    result_console.print(f"exported {count} replies to {out}")


def show_usage(usage: list[dict[str, Any]]) -> None:
    """Calls, tokens and (where the model YAML gave prices) cost, by stage and model."""
    from medrealmm.evaluate.results import USAGE_COLUMNS

    spend = Table(
        title="Calls, tokens and cost", box=box.SIMPLE, pad_edge=False, collapse_padding=True
    )
    names = USAGE_COLUMNS[:-1]  # cost is formatted below
    headers = ("calls", "cached", "failed", "requests", "prompt tok", "completion tok")
    headers += ("prompt tok unknown", "cost")  # calls whose server did not say
    for column in ("stage", "model", *headers):
        spend.add_column(column, no_wrap=True)
    for entry in usage:
        cost = "-" if entry["cost"] is None else f"{entry['cost']:.4f}"
        plain_row(spend, *(str(entry[name]) for name in names), cost)
    priced = [e["cost"] for e in usage if e["cost"] is not None]
    if priced:
        plain_row(spend, "total", *[""] * (len(names) - 1), f"{sum(priced):.4f}")
    print_table(spend)


def show_abstentions(rows: list[Abstentions]) -> None:
    """How often each grader could not assess, per model (counted as --abstain said)."""
    table = Table(
        title="Cannot assess, by grader", box=box.SIMPLE, pad_edge=False, collapse_padding=True
    )
    for column in ("grader", "model", "img", "cases", "with any", "criteria"):
        table.add_column(column, no_wrap=True)
    for row in rows:
        plain_row(
            table,
            row.grader,
            row.model,
            "on" if row.images else "off",
            str(row.cases),
            str(row.cases_with_abstentions),
            str(row.abstained),
        )
    print_table(table)


def show_panel(panel: PanelSummary) -> None:
    """A panel's members (weight, calls, tokens) and their agreement on criterion verdicts:
    Krippendorff's alpha over all graders beside each pair's AC1."""
    table = Table(
        title=f"Judge panel {escape(panel.name)} ({panel.method})",
        box=box.SIMPLE,
        pad_edge=False,
        collapse_padding=True,
    )
    for column in ("grader", "weight", "calls", "cached", "prompt tok", "completion tok"):
        table.add_column(column, no_wrap=True)
    for m in panel.members:
        plain_row(
            table,
            m.grader,
            f"{m.weight:g}",
            str(m.calls),
            str(m.cached_calls),
            str(m.prompt_tokens),
            str(m.completion_tokens),
        )
    print_table(table)
    agree = Table(
        title="Panel agreement on LLM criterion verdicts",
        box=box.SIMPLE,
        pad_edge=False,
        collapse_padding=True,
    )
    for column in ("criteria", "items", "alpha", "pair", "n", "AC1"):
        agree.add_column(column, no_wrap=True)
    for row in panel.agreement:
        for i, (a, b, n, ac1) in enumerate(row.pairs):
            plain_row(
                agree,
                row.subset if i == 0 else "",
                str(row.items) if i == 0 else "",
                ("-" if row.alpha is None else f"{row.alpha:.3f}") if i == 0 else "",
                f"{a} / {b}",
                str(n),
                "-" if ac1 is None else f"{ac1:.3f}",
            )
    print_table(agree)


def show_evaluations(results: Results) -> None:
    """Where each row's numbers came from: one line per evaluation (EvalSpec)."""
    table = Table(title="Evaluations", box=box.SIMPLE, pad_edge=False, collapse_padding=True)
    for column in ("id", "row", "kind", "model id", "grader", "k", "benchmark", "finished"):
        table.add_column(column, no_wrap=True)
    conditions = sorted({r.condition for r in results.records})
    for model, images in conditions:
        for spec in results.eval_of((model, images)):
            asked = spec.model
            served = (asked.served or [asked.model or asked.name]) if asked else []
            bench = spec.benchmark
            plain_row(
                table,
                spec.eval_id,
                f"{model} ({'img' if images else 'txt'})",
                spec.kind,
                ", ".join(served) or "-",
                spec.grader.name,
                str(spec.k),
                f"{bench.name} {bench.version}" if bench.kind == "release" else "run",
                f"{spec.finished_at:%Y-%m-%d %H:%M}" if spec.finished_at else "unfinished",
            )
    print_table(table)


def max_set(sets: dict[tuple[str, bool], frozenset[str]]) -> frozenset[str]:
    """The case set most rows share (the largest on a tie): rows on another one are marked."""
    counts: dict[frozenset[str], int] = {}
    for cases in sets.values():
        counts[cases] = counts.get(cases, 0) + 1
    return max(counts, key=lambda cases: (counts[cases], len(cases)))


def _by_consultation(row: ModelSummary, records: list[CaseRecord]) -> ModelSummary:
    """The row with its score weighing each consultation alike (sample 0, complete cases)."""
    from dataclasses import replace

    mine = [
        r for r in records if (r.model, r.images) == (row.model, row.images) and r.score is not None
    ]
    score = weighted_mean(
        [float(r.score) for r in mine if r.score is not None],
        [r.consultation_id or r.instance_id for r in mine],
        Weighting.CONSULTATION,
    )
    return replace(row, score=score)


def show_summary(
    grader: str,
    rows: list[ModelSummary],
    stale: dict[tuple[str, bool], int],
    weight: Weighting = Weighting.CASE,
    imported: set[tuple[str, bool]] | None = None,
    marked: set[tuple[str, bool]] | None = None,
) -> None:
    """The score table: one row per model and image setting. Imported replies show 'imp'
    for img (their authors decided what they saw); rows in ``marked`` carry a †."""
    imported, marked = imported or set(), marked or set()
    refusals = any(row.refusals for row in rows)  # a column only when a model declined
    unapproved = max((row.unapproved_rubrics for row in rows), default=0)
    table = Table(
        title=f"Scores (0-100, grader {escape(grader)}; each {weight} weighs alike)",
        caption="* rule-based baseline, not a model. score and +met / -hit: sample 0 of each "
        "instance; mean@k / worst@k over instances with all k samples complete (n@k)"
        + ("; refused: replies the model declined, each scored 0" if refusals else "")
        + (f". {unapproved} instances scored on unapproved rubrics" if unapproved else "")
        + ("; img imp: imported replies, their authors' own setting" if imported else ""),
        box=box.SIMPLE,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("model", no_wrap=True)
    columns = ("img", "score", "mean@k", "worst@k", "k", "n@k", "+met", "-hit", "scored")
    # The refusals and abstentions columns only where they happened: the table keeps its width.
    abstained = any(row.abstentions for row in rows)
    extra = (*(("refused",) if refusals else ()), *(("abst",) if abstained else ()))
    for column in (*columns, "incompl", *extra):
        table.add_column(column, justify="right", no_wrap=True)
    for row in rows:
        condition = (row.model, row.images)
        name = f"{row.model}*" if row.is_baseline else row.model
        name += " †" if condition in marked else ""
        plain_row(
            table,
            name,
            "imp" if condition in imported else "on" if row.images else "off",
            _points(row.score),
            _points(row.mean_of_k),
            _points(row.worst_of_k),
            str(row.k),
            str(row.k_instances),
            "-" if row.positive_met_mean is None else f"{row.positive_met_mean:.2f}",
            "-" if row.negative_triggered_mean is None else f"{row.negative_triggered_mean:.2f}",
            str(row.complete),
            str(row.incomplete),
            *((str(row.refusals),) if refusals else ()),
            *((str(row.abstentions),) if abstained else ()),
        )
    print_table(table)
    for (model, images), count in stale.items():
        console.print(
            f"[yellow]{count} scores of {escape(model)} ({'img' if images else 'txt'}) were graded "
            "against a rubric that no longer applies and are left out; rerun "
            "`medrealmm eval run` to regrade the changed criteria[/yellow]"
        )
