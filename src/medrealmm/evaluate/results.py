"""The one results layer: what ``eval score``, the report and the Python API all read.

    results = load_results(store)              # the primary grader's current scores
    results.summary()                          # Score, mean@k, worst@k, +met / -hit per row
    results.stale                              # scores graded against an older rubric

Scores graded against a rubric version that no longer applies are kept out of every number
and listed as stale; ``medrealmm eval run`` regrades only the criteria that changed.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from medrealmm.evaluate.provenance import (
    BenchmarkRef,
    EvalSpec,
    UsageTotals,
    benchmark_of,
    load_specs,
    rater_name,
)
from medrealmm.evaluate.scoring import ModelSummary, summarize_models
from medrealmm.evaluate.versions import VersionComparison, compare_versions
from medrealmm.llm import ModelSpec, display_name
from medrealmm.rubric.rounds import rubric_digests
from medrealmm.schema import CaseScore, CriterionKind, Response
from medrealmm.stats.alpha import PanelAgreement, panel_agreement
from medrealmm.stats.cases import (
    ONLINE_MODEL,
    PRIMARY_GRADER_META,
    CaseRecord,
    headline_records,
    load_scored_cases,
    primary_grader,
)
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import SEP, ResponseKey, ScoreKey, VerdictKey

Condition = tuple[str, bool]  # (model, images)


def verdict_key(grader: str, response_key: str, criterion_id: str) -> str:
    return VerdictKey(grader, response_key, criterion_id).format()


def score_key(grader: str, response_key: str) -> str:
    return ScoreKey(grader, response_key).format()


def graders(store: RunStore) -> list[str]:
    return sorted({ScoreKey.parse(key).rater for key in store.keys(stages.EVAL_SCORE)})


def load_scores(store: RunStore, grader: str) -> list[CaseScore]:
    prefix = f"{grader}|"
    keys = sorted(k for k in store.keys(stages.EVAL_SCORE) if k.startswith(prefix))
    found = (store.get(stages.EVAL_SCORE, key, CaseScore) for key in keys)
    return [score for score in found if score is not None]


def baseline_models(store: RunStore) -> set[str]:
    return {r.model for r in store.iter(stages.EVAL_RESPONSE, Response) if r.is_baseline}


@dataclass(frozen=True)
class Results:
    """One grader's scores in a run: current ones in ``records``, stale ones apart."""

    grader: str | None
    records: list[CaseRecord]  # every sample, graded against the applicable rubric
    stale: list[CaseRecord]
    specs: dict[str, EvalSpec] = field(default_factory=dict)
    graders: list[str] = field(default_factory=list)
    #: set when the rows come from two versions of a release: only their shared cases count
    versions: VersionComparison | None = None

    @property
    def headline(self) -> list[CaseRecord]:
        """Sample 0 of each instance: what the Score, CIs and breakdowns are computed on."""
        return headline_records(self.records, self.grader)

    def k(self) -> dict[Condition, int]:
        """Each condition's k as its evaluation asked for it (the largest, across reruns)."""
        found: dict[Condition, int] = {}
        for record in self.records:
            spec = self.specs.get(record.eval_id or "")
            if spec is not None:
                found[record.condition] = max(found.get(record.condition, 1), spec.k)
        return found

    def summary(self) -> list[ModelSummary]:
        return summarize_models(self.records, k=self.k())

    def stale_by_condition(self) -> dict[Condition, int]:
        return dict(sorted(Counter(r.condition for r in self.stale).items()))

    def imported(self) -> set[Condition]:
        """Conditions whose replies were imported from a file (``eval import-responses``)."""
        kinds = {spec.eval_id: spec.kind for spec in self.specs.values()}
        return {r.condition for r in self.records if kinds.get(r.eval_id or "") == "imported"}

    def case_sets(self) -> dict[Condition, frozenset[str]]:
        """The instances each row has a complete score for: rows whose sets differ are not
        compared like with like (``common`` restricts them to the shared ones)."""
        found: dict[Condition, set[str]] = {}
        for record in self.records:
            cases = found.setdefault(record.condition, set())
            if record.score is not None:
                cases.add(record.instance_id)
        return {condition: frozenset(cases) for condition, cases in sorted(found.items())}

    def shared_cases(self) -> frozenset[str]:
        """The instances every row scored."""
        sets = list(self.case_sets().values())
        return frozenset.intersection(*sets) if sets else frozenset()

    def common(self) -> Results:
        """These results on the shared cases only (``eval score --common``)."""
        shared = self.shared_cases()
        return replace(self, records=[r for r in self.records if r.instance_id in shared])

    def eval_of(self, condition: Condition) -> list[EvalSpec]:
        """The evaluations whose scores make up a condition's row."""
        ids = {r.eval_id for r in self.records if r.condition == condition and r.eval_id}
        return [self.specs[i] for i in sorted(ids) if i in self.specs]


def combine(first: Results, other: Results, *, name: str = "another run") -> Results:
    """A leaderboard over runs of one benchmark: ``other``'s rows added to ``first``'s.

    Both must be graded by the same grader; a (model, images) row in both is refused, except
    the Online anchor, which is the same replies everywhere and is kept from ``first``.
    """
    if other.grader != first.grader:
        raise ValueError(f"{name} is graded by {other.grader!r}, not {first.grader!r}")
    mine = {r.condition for r in [*first.records, *first.stale]}
    theirs = {r.condition for r in [*other.records, *other.stale]} - {(ONLINE_MODEL, True)}
    clash = sorted(mine & theirs)
    if clash:
        shown = ", ".join(f"{m} ({'img' if i else 'txt'})" for m, i in clash)
        raise ValueError(f"{shown} scored in more than one run; give each model one run")
    kept = [r for r in other.records if r.condition in theirs]
    return Results(
        grader=first.grader,
        records=[*first.records, *kept],
        stale=[*first.stale, *(r for r in other.stale if r.condition in theirs)],
        specs={**other.specs, **first.specs},
        graders=sorted(set(first.graders) | set(other.graders)),
    )


def load_leaderboard(stores: Sequence[RunStore], grader: str | None = None) -> Results:
    """``load_results`` over several runs of the same benchmark (same release name, version
    and manifest, or the same builder's run): one table across every evaluated model.

    Runs of two versions of one release (a living benchmark: the later adds cases and drops
    withdrawn ones) are compared on the cases both versions hold; ``Results.versions`` says
    how many that is, what each version has alone, and whether C changed."""
    first = stores[0]
    results = load_results(first, grader)
    expected = benchmark_of(first)
    cases: dict[str, set[str]] = {}
    for store in stores:
        found = benchmark_of(store)
        if found.identity != expected.identity and not _other_version(expected, found):
            raise ValueError(
                f"{store.path.parent} evaluated {found.name or found.location} "
                f"{found.version or ''}, not {expected.name or expected.location} "
                f"{expected.version or ''}: a leaderboard needs one benchmark"
            )
        cases.setdefault(found.version or "", set()).update(store.keys(stages.MCCP_INSTANCE))
        if store is not first:
            other = load_results(store, results.grader)
            if found.identity != expected.identity:  # another version: one model on both
                results, other = by_version(results, other, expected, found)
            results = combine(results, other, name=str(store.path.parent))
    if len(cases) == 1:
        return results
    versions = compare_versions(cases)
    return replace(
        results,
        records=[r for r in results.records if r.instance_id in versions.shared],
        stale=[r for r in results.stale if r.instance_id in versions.shared],
        versions=versions,
    )


def by_version(
    first: Results, other: Results, mine: BenchmarkRef, theirs: BenchmarkRef
) -> tuple[Results, Results]:
    """A model evaluated on both versions (in the same image condition) is two conditions,
    each named with its version (``model @0.1``, ``model @0.2``), so the leaderboard and
    the paired table compare them on the shared cases; the Online anchor stays one row."""
    conditions = {r.condition for r in [*first.records, *first.stale]}
    conditions &= {r.condition for r in [*other.records, *other.stale]}
    both = {model for model, _ in conditions} - {ONLINE_MODEL}
    return _renamed(first, both, mine.version or ""), _renamed(other, both, theirs.version or "")


def _renamed(results: Results, models: set[str], version: str) -> Results:
    def name(record: CaseRecord) -> CaseRecord:
        if record.model not in models:
            return record
        return replace(record, model=f"{record.model} @{version}")

    return replace(
        results,
        records=[name(r) for r in results.records],
        stale=[name(r) for r in results.stale],
    )


def _other_version(expected: BenchmarkRef, found: BenchmarkRef) -> bool:
    """Another version of the same release (same name, a different version)."""
    return (
        expected.kind == found.kind == "release"
        and expected.name == found.name
        and expected.version != found.version
    )


def load_results(store: RunStore, grader: str | None = None) -> Results:
    """``grader`` (a name, or 'offline' for the baseline), else the run's primary grader
    (store meta ``eval.primary_grader``), else the grader that scored most."""
    everything = load_scored_cases(store)
    known = sorted({r.grader for r in everything})
    if grader is not None:
        grader = display_name(grader)
        if grader not in known:
            raise ValueError(f"grader {grader!r} scored nothing in {store.path}; known: {known}")
    chosen = primary_grader(everything, grader or store.get_meta(PRIMARY_GRADER_META))
    mine = [r for r in everything if r.grader == chosen]
    return Results(
        grader=chosen,
        records=[r for r in mine if not r.stale],
        stale=[r for r in mine if r.stale],
        specs=load_specs(store),
        graders=known,
    )


#: The columns of a usage row as ``usage_with_cost`` returns them, in display order.
USAGE_COLUMNS = (
    "stage",
    "model",
    "calls",
    "cached_calls",
    "failed_calls",
    "attempts",
    "prompt_tokens",
    "completion_tokens",
    "unknown_prompt_calls",
    "cost",
)


def usage_with_cost(store: RunStore) -> list[dict[str, Any]]:
    """The store's usage rows (calls, cached calls, tokens by stage and model), each with
    ``cost`` priced from the YAML prices the run recorded (None where no price was given)."""
    prices = store.get_meta(stages.PRICES_META) or {}
    rows = []
    for row in store.usage():
        # a grader's grouped calls are counted as NAME[grouped]: priced as NAME
        price = prices.get(row["model"]) or prices.get(row["model"].split("[", 1)[0]) or {}
        cost = None
        if price.get("in") is not None or price.get("out") is not None:
            cost = round(
                row["prompt_tokens"] / 1e6 * (price.get("in") or 0.0)
                + row["completion_tokens"] / 1e6 * (price.get("out") or 0.0),
                6,
            )
        rows.append({**row, "cost": cost})
    return rows


def record_prices(store: RunStore, specs: Iterable[ModelSpec | None]) -> None:
    """Keep the YAML prices of the models a run used, for ``usage_with_cost``."""
    prices = dict(store.get_meta(stages.PRICES_META) or {})
    for spec in specs:
        if spec is not None and (spec.price_per_mtok_in or spec.price_per_mtok_out):
            prices[spec.name] = {"in": spec.price_per_mtok_in, "out": spec.price_per_mtok_out}
    if prices:
        store.set_meta(stages.PRICES_META, prices)


@dataclass(frozen=True)
class Abstentions:
    """ "Cannot assess" verdicts of one grader on one model's replies (current scores)."""

    grader: str
    model: str
    images: bool
    cases: int
    abstained: int  # criteria
    cases_with_abstentions: int


def abstentions_by_grader(store: RunStore) -> list[Abstentions]:
    """Per grader (panel members and panels alike) and model: how often it could not assess."""
    groups: dict[tuple[str, str, bool], list[CaseRecord]] = {}
    for record in load_scored_cases(store):
        if not record.stale:
            groups.setdefault((record.grader, *record.condition), []).append(record)
    return [
        Abstentions(
            grader,
            model,
            images,
            len(records),
            sum(r.abstained for r in records),
            sum(1 for r in records if r.abstained),
        )
        for (grader, model, images), records in sorted(groups.items())
    ]


@dataclass(frozen=True)
class PanelMember:
    grader: str
    weight: float
    calls: int
    cached_calls: int
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class PanelSummary:
    """A judge panel as ``eval score`` and the report show it: its members' own calls and
    tokens (from their evaluations' specs) and their agreement on criterion verdicts."""

    name: str
    method: str
    members: list[PanelMember]
    agreement: list[PanelAgreement]


def panel_summary(store: RunStore, results: Results) -> PanelSummary | None:
    """The panel whose scores ``results`` shows, or None when its grader is no panel."""
    ids = {r.eval_id for r in results.records}
    specs = [s for s in results.specs.values() if s.eval_id in ids and s.panel is not None]
    if not specs:
        return None
    panel = specs[0].panel
    assert panel is not None
    conditions = {(s.label, s.images) for s in specs}
    members = []
    for name in panel.members:
        used = UsageTotals()
        for spec in results.specs.values():
            mine = spec.grader.name == name and spec.panel is None
            if mine and (spec.label, spec.images) in conditions:
                used.merge(spec.usage.get(stages.EVAL_VERDICT, UsageTotals()))
        weight = panel.weights.get(name, 1.0) if panel.method == "weighted" else 1.0
        members.append(
            PanelMember(
                name,
                weight,
                used.calls,
                used.cached_calls,
                used.prompt_tokens,
                used.completion_tokens,
            )
        )
    verdicts: dict[str, dict[tuple[str, str], bool]] = {m: {} for m in panel.members}
    weights: dict[tuple[str, str], int] = {}
    responses = {
        stages.response_key(r.model, r.images, r.instance_id, r.sample) for r in results.records
    }
    rubrics = rubric_digests(store)
    llm = {
        (iid, c.id): c.weight
        for iid, rubric in rubrics.items()
        for c in rubric.criteria
        if c.kind is CriterionKind.LLM
    }
    for name in panel.members:
        rater = rater_name(name, specs[0].grading)
        for key, raw in store.raw_rows(stages.EVAL_VERDICT, prefix=rater + SEP).items():
            parsed = VerdictKey.parse(key)
            if parsed.response not in responses:
                continue
            instance_id = ResponseKey.parse(parsed.response).instance_id
            weight = llm.get((instance_id, parsed.criterion_id))
            value = json.loads(raw).get("value")
            if weight is None or value is None:
                continue
            item = (parsed.response, parsed.criterion_id)
            verdicts[name][item] = bool(value)
            weights[item] = weight
    return PanelSummary(
        specs[0].grader.name, panel.method, members, panel_agreement(verdicts, weights)
    )
