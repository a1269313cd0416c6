"""Case scores and model-level aggregates (paper 3.4, 4.2, 8): pure functions, no I/O.

S = clip(sum_j w_j v_j / sum_j max(w_j, 0), 0, 1). A case with any criterion left without a
verdict is incomplete: it has no score and is reported as such, never counted as 0. A
criterion the grader could not assess counts as the run's ``AbstainPolicy`` says; under
``drop`` a reply whose positive criteria were all dropped has nothing left to earn, so unless a
penalty was triggered (0, as clipping gives) it is incomplete, never a perfect 1.0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from statistics import fmean
from typing import Protocol

from medrealmm.schema import CaseScore, Criterion, Verdict, VerdictStatus
from medrealmm.stats.scoring import rubric_score


class AbstainPolicy(StrEnum):
    """What a "cannot assess" verdict counts as in the case score (``--abstain``)."""

    #: v_j = 0, as a binary grader would have answered: the paper's denominator, unchanged.
    UNMET = "unmet"
    #: Left out of numerator and denominator; a case with nothing left to earn (every
    #: criterion, or every positive one with no penalty triggered, dropped) is incomplete.
    DROP = "drop"
    #: The case is incomplete: no score, listed, never a 0.
    INCOMPLETE = "incomplete"


DEFAULT_ABSTAIN = AbstainPolicy.UNMET


def score_case(
    *,
    instance_id: str,
    model: str,
    images: bool,
    sample: int,
    criteria: Sequence[Criterion],
    verdicts: Mapping[str, Verdict],
    rubric_approved: bool = True,
    eval_id: str | None = None,
    rubric_version: str | None = None,
    abstain: AbstainPolicy = DEFAULT_ABSTAIN,
) -> CaseScore:
    """One CaseScore; criteria with a missing or failed verdict make the case incomplete, and
    abstained ones count as ``abstain`` says."""
    abstain = AbstainPolicy(abstain)
    status = {c.id: verdicts[c.id].status if c.id in verdicts else None for c in criteria}
    abstained = [c.id for c in criteria if status[c.id] is VerdictStatus.ABSTAINED]
    answered = (VerdictStatus.OK, VerdictStatus.ABSTAINED)
    failed = [c.id for c in criteria if status[c.id] not in answered]
    counted = [c for c in criteria if not (abstain is AbstainPolicy.DROP and c.id in abstained)]
    graded = [(c, bool(verdicts[c.id].value)) for c in counted if c.id not in failed]
    emptied = bool(criteria) and not counted  # every criterion dropped: nothing to score
    if any(c.weight > 0 for c in criteria) and not any(c.weight > 0 for c in counted):
        # every positive criterion dropped: 1.0 would be a score earned by abstaining
        emptied = emptied or not any(met and c.weight < 0 for c, met in graded)
    complete = not failed and not emptied
    if abstain is AbstainPolicy.INCOMPLETE and abstained:
        complete = False
    return CaseScore(
        instance_id=instance_id,
        model=model,
        sample=sample,
        images=images,
        score=rubric_score([(c.weight, met) for c, met in graded]) if complete else None,
        complete=complete,
        positive_points_met=sum(c.weight for c, met in graded if met and c.weight > 0),
        positive_points_total=sum(max(c.weight, 0) for c in counted),
        positive_met=sum(1 for c, met in graded if met and c.weight > 0),
        negative_triggered=sum(1 for c, met in graded if met and c.weight < 0),
        failed_criteria=failed,
        abstained_criteria=abstained,
        verdicts=[verdicts[c.id] for c in criteria if c.id in verdicts],
        rubric_approved=rubric_approved,
        eval_id=eval_id,
        rubric_version=rubric_version,
    )


def refusal_score(
    *,
    instance_id: str,
    model: str,
    images: bool,
    sample: int,
    criteria: Sequence[Criterion],
    rubric_approved: bool = True,
    eval_id: str | None = None,
    rubric_version: str | None = None,
) -> CaseScore:
    """A refused reply: complete, 0, no criterion graded, marked so the row counts it."""
    return CaseScore(
        instance_id=instance_id,
        model=model,
        sample=sample,
        images=images,
        score=0.0,
        positive_points_total=sum(max(c.weight, 0) for c in criteria),
        rubric_approved=rubric_approved,
        eval_id=eval_id,
        rubric_version=rubric_version,
        refused=True,
    )


class Scored(Protocol):
    """What a summary reads from a score: ``CaseScore`` and the results layer's records."""

    @property
    def model(self) -> str: ...
    @property
    def images(self) -> bool: ...
    @property
    def instance_id(self) -> str: ...
    @property
    def sample(self) -> int: ...
    @property
    def score(self) -> float | None: ...
    @property
    def positive_met(self) -> int: ...
    @property
    def negative_triggered(self) -> int: ...
    @property
    def rubric_approved(self) -> bool: ...
    @property
    def abstained(self) -> int: ...


#: Stated wherever mean@k and worst@k are shown.
K_DEFINITIONS = (
    "Score: mean over instances of the sample-0 score (the paper invokes each model once, 7.1); "
    "+met / -hit average the same sample-0 cases. mean@k: mean over instances of the mean of "
    "their k sample scores; worst@k: mean over instances of the lowest of their k sample scores "
    "(HealthBench's worst-at-k). Only instances with all k samples complete count toward "
    "mean@k and worst@k; k is the evaluation's k."
)
#: The same definitions for the Chinese report page.
K_DEFINITIONS_ZH = (
    "Score：各实例第 0 次采样得分的均值（论文 7.1：每个模型只调用一次）；"
    "+met / -hit 取同一批第 0 次采样病例的均值。mean@k：各实例 k 次采样得分均值的平均；"
    "worst@k：各实例 k 次采样中最低得分的平均（即 HealthBench 的 worst-at-k）。"
    "只有 k 次采样全部完成的实例计入 mean@k 与 worst@k；k 为该次评测设定的 k。"
)


@dataclass
class ModelSummary:
    """One row of the results table: a model under one image setting, scored by one grader.

    ``score`` and the positive/negative means use sample 0 of each instance (the paper's
    single invocation); ``mean_of_k`` and ``worst_of_k`` use only the ``k_instances`` whose k
    samples are all complete (``K_DEFINITIONS``). Scores are on the 0-1 scale.
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
    k_instances: int = 0
    incomplete_cases: list[str] = field(default_factory=list)
    #: Replies (every sample) in which the model declined; each is scored 0.
    refusals: int = 0
    #: "cannot assess" verdicts over all the row's samples, counted as the run's policy says.
    abstentions: int = 0


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def _summary(
    model: str,
    images: bool,
    by_instance: Mapping[str, Sequence[Scored]],
    k: int,
    baseline: bool,
) -> ModelSummary:
    """One pass over the row's scores (a report's rows hold every sample of every case)."""
    samples = refusals = abstentions = 0
    first: list[float] = []  # sample 0's complete scores, and their criteria counts
    positives: list[float] = []
    negatives: list[float] = []
    full: list[list[float]] = []  # the instances whose k samples are all complete
    incomplete: list[str] = []
    unapproved: set[str] = set()
    for cases in by_instance.values():
        by_sample: list[float | None] = [None] * k  # the last score of each of samples 0..k-1
        for c in cases:
            score = c.score
            if 0 <= c.sample < k:
                by_sample[c.sample] = score
            if score is None:
                incomplete.append(f"{c.instance_id}#{c.sample}")
            elif c.sample == 0:
                first.append(float(score))
                positives.append(float(c.positive_met))
                negatives.append(float(c.negative_triggered))
            if not c.rubric_approved:
                unapproved.add(c.instance_id)
            if getattr(c, "refused", False):
                refusals += 1
            abstentions += c.abstained
        samples += len(cases)
        if None not in by_sample:
            full.append([float(v) for v in by_sample if v is not None])
    return ModelSummary(
        model=model,
        images=images,
        instances=len(by_instance),
        samples=samples,
        k=k,
        complete=samples - len(incomplete),
        incomplete=len(incomplete),
        score=_mean(first),
        mean_of_k=_mean([fmean(s) for s in full]),
        worst_of_k=_mean([min(s) for s in full]),
        positive_met_mean=_mean(positives),
        negative_triggered_mean=_mean(negatives),
        unapproved_rubrics=len(unapproved),
        is_baseline=baseline,
        k_instances=len(full),
        incomplete_cases=sorted(incomplete),
        refusals=refusals,
        abstentions=abstentions,
    )


def summarize_models(
    scores: Iterable[Scored],
    *,
    baselines: Iterable[str] = (),
    k: Mapping[tuple[str, bool], int] | None = None,
) -> list[ModelSummary]:
    """Aggregate scores per (model, images), best first (incomplete rows last).

    ``k`` gives each (model, images) its evaluation's k; without it, the most samples any
    instance has. A score with a ``baseline`` attribute set marks its model a baseline too.
    """
    groups: dict[tuple[str, bool], dict[str, list[Scored]]] = defaultdict(lambda: defaultdict(list))
    baseline_names = set(baselines)
    for case in scores:
        groups[(case.model, case.images)][case.instance_id].append(case)
        if getattr(case, "baseline", False):
            baseline_names.add(case.model)
    rows = []
    for (model, images), by_instance in groups.items():
        most = max(len(cases) for cases in by_instance.values())
        wanted = (k or {}).get((model, images), most)
        rows.append(_summary(model, images, by_instance, wanted, model in baseline_names))
    rows.sort(key=lambda r: (r.score is None, -(r.score or 0.0), r.model, not r.images))
    return rows
