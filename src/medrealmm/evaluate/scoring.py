"""Case scores and model-level aggregates (paper 3.4, 4.2, 8): pure functions, no I/O.

S = clip(sum_j w_j v_j / sum_j max(w_j, 0), 0, 1). A case with any criterion left without a
verdict is incomplete: it has no score and is reported as such, never counted as 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean

from medrealmm.schema import CaseScore, Criterion, Verdict, VerdictStatus


def rubric_score(weighted: Sequence[tuple[int, bool]]) -> float:
    """The clipped, positive-normalised score of (weight, verdict) pairs.

    A rubric with no positive weight only lists errors to avoid: 0/0 is defined as 1.0 when
    nothing is triggered, and any triggered penalty gives 0.0 (what clipping gives anyway).
    """
    positive_total = sum(max(weight, 0) for weight, _ in weighted)
    earned = sum(weight for weight, met in weighted if met)
    if positive_total == 0:
        return 1.0 if earned == 0 else 0.0
    return min(max(earned / positive_total, 0.0), 1.0)


def score_case(
    *,
    instance_id: str,
    model: str,
    images: bool,
    sample: int,
    criteria: Sequence[Criterion],
    verdicts: Mapping[str, Verdict],
    rubric_approved: bool = True,
) -> CaseScore:
    """One CaseScore; criteria with a missing or failed verdict make the case incomplete."""
    failed = [
        c.id
        for c in criteria
        if c.id not in verdicts or verdicts[c.id].status is not VerdictStatus.OK
    ]
    graded = [(c, bool(verdicts[c.id].value)) for c in criteria if c.id not in failed]
    complete = not failed
    return CaseScore(
        instance_id=instance_id,
        model=model,
        sample=sample,
        images=images,
        score=rubric_score([(c.weight, met) for c, met in graded]) if complete else None,
        complete=complete,
        positive_points_met=sum(c.weight for c, met in graded if met and c.weight > 0),
        positive_points_total=sum(max(c.weight, 0) for c in criteria),
        positive_met=sum(1 for c, met in graded if met and c.weight > 0),
        negative_triggered=sum(1 for c, met in graded if met and c.weight < 0),
        failed_criteria=failed,
        verdicts=[verdicts[c.id] for c in criteria if c.id in verdicts],
        rubric_approved=rubric_approved,
    )


@dataclass
class ModelSummary:
    """One row of the results table: a model under one image setting, scored by one grader.

    ``score`` follows the paper (sample 0 of each instance); ``mean_of_k`` and ``worst_of_k``
    use the instances whose k samples are all complete. Scores are on the 0-1 scale.
    """

    model: str
    images: bool
    instances: int
    samples: int
    k: int
    complete: int
    incomplete: int
    score: float | None
    mean_of_k: float | None
    worst_of_k: float | None
    positive_met_mean: float | None
    negative_triggered_mean: float | None
    unapproved_rubrics: int
    is_baseline: bool = False
    incomplete_cases: list[str] = field(default_factory=list)


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def summarize(scores: Iterable[CaseScore], *, baselines: Iterable[str] = ()) -> list[ModelSummary]:
    """Aggregate case scores per (model, images), sorted best first (incomplete rows last)."""
    groups: dict[tuple[str, bool], dict[str, list[CaseScore]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for case in scores:
        groups[(case.model, case.images)][case.instance_id].append(case)
    baseline_names = set(baselines)
    rows: list[ModelSummary] = []
    for (model, images), by_instance in groups.items():
        all_cases = [c for cases in by_instance.values() for c in cases]
        done = [c for c in all_cases if c.complete]
        first = [c.score for cases in by_instance.values() for c in cases if c.sample == 0]
        full = [cases for cases in by_instance.values() if all(c.complete for c in cases)]
        per_instance = [[c.score for c in cases if c.score is not None] for cases in full]
        rows.append(
            ModelSummary(
                model=model,
                images=images,
                instances=len(by_instance),
                samples=len(all_cases),
                k=max(len(cases) for cases in by_instance.values()),
                complete=len(done),
                incomplete=len(all_cases) - len(done),
                score=_mean([s for s in first if s is not None]),
                mean_of_k=_mean([fmean(s) for s in per_instance]),
                worst_of_k=_mean([min(s) for s in per_instance]),
                positive_met_mean=_mean([float(c.positive_met) for c in done]),
                negative_triggered_mean=_mean([float(c.negative_triggered) for c in done]),
                unapproved_rubrics=len({c.instance_id for c in all_cases if not c.rubric_approved}),
                is_baseline=model in baseline_names,
                incomplete_cases=sorted(
                    f"{c.instance_id}#{c.sample}" for c in all_cases if not c.complete
                ),
            )
        )
    rows.sort(key=lambda r: (r.score is None, -(r.score or 0.0), r.model, not r.images))
    return rows
