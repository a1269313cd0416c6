"""Criterion-level verdicts per rater (LLM judges and the physician panel) and their pairwise
agreement, overall and split by positive vs negative criteria (paper 4.5, Table 2)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import combinations

from medrealmm.rubric.rounds import evaluation_rubrics
from medrealmm.schema import Verdict
from medrealmm.stats.agreement import agreement
from medrealmm.stats.scoring import complete_rubric_score
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import ResponseKey, VerdictKey

PANEL_RATER = "医生小组"
SUBSETS = ("all", "positive", "negative")

Item = tuple[str, str]  # (response key, criterion id)


@dataclass
class RaterData:
    verdicts: dict[str, dict[Item, bool]] = field(default_factory=dict)  # rater -> item -> v
    weights: dict[str, dict[str, int]] = field(default_factory=dict)  # instance -> crit -> w

    def weight(self, item: Item) -> int | None:
        instance_id = ResponseKey.parse(item[0]).instance_id
        return self.weights.get(instance_id, {}).get(item[1])


@dataclass(frozen=True)
class PairAgreement:
    rater_a: str
    rater_b: str
    subset: str  # all | positive | negative criteria
    n: int
    observed: float | None
    ac1: float | None
    kappa: float | None


def panel_consensus(by_reviewer: Mapping[str, Mapping[Item, bool]]) -> dict[Item, bool]:
    """One panel verdict per item: the reviewers' majority; a tie is no consensus and dropped."""
    votes: dict[Item, list[bool]] = defaultdict(list)
    for verdicts in by_reviewer.values():
        for item, value in verdicts.items():
            votes[item].append(value)
    return {item: sum(v) * 2 > len(v) for item, v in sorted(votes.items()) if sum(v) * 2 != len(v)}


def _read_verdicts(store: RunStore, stage: str) -> dict[str, dict[Item, bool]]:
    out: dict[str, dict[Item, bool]] = defaultdict(dict)
    for key, verdict in store.items(stage, Verdict):
        if verdict.value is None:
            continue  # a failed verdict is no judgement, not a "no"
        parsed = VerdictKey.parse(key)
        ResponseKey.parse(parsed.response)
        out[parsed.rater][(parsed.response, parsed.criterion_id)] = verdict.value
    return dict(out)


def load_raters(store: RunStore) -> RaterData:
    """Judges from EVAL_VERDICT; the panel (all reviewers, one consensus) from PANEL_VERDICT."""
    data = RaterData(verdicts=_read_verdicts(store, stages.EVAL_VERDICT))
    panel = panel_consensus(_read_verdicts(store, stages.PANEL_VERDICT))
    if panel:
        data.verdicts[PANEL_RATER] = panel
    data.weights = scored_rubric_weights(store)
    return data


def scored_rubric_weights(store: RunStore) -> dict[str, dict[str, int]]:
    """Criterion weights of the rubric each instance was graded against: the approved
    RUBRIC_FINAL, else its latest refinement round (the rule evaluation applies)."""
    latest = evaluation_rubrics(store)
    return {i: {c.id: c.weight for c in rubric.criteria} for i, rubric in latest.items()}


def _in_subset(weight: int | None, subset: str) -> bool:
    if subset == "all":
        return True
    if weight is None:
        return False
    return weight > 0 if subset == "positive" else weight < 0


def pairwise_agreement(data: RaterData) -> list[PairAgreement]:
    """Every rater pair on the items both judged; a pair with no shared item gets n = 0."""
    rows = []
    for a, b in combinations(sorted(data.verdicts, key=_rater_order), 2):
        shared = sorted(set(data.verdicts[a]) & set(data.verdicts[b]))
        for subset in SUBSETS:
            items = [i for i in shared if _in_subset(data.weight(i), subset)]
            if not items:
                rows.append(PairAgreement(a, b, subset, 0, None, None, None))
                continue
            stats = agreement(
                [data.verdicts[a][i] for i in items], [data.verdicts[b][i] for i in items]
            )
            rows.append(
                PairAgreement(a, b, subset, stats.n, stats.observed, stats.ac1, stats.kappa)
            )
    return rows


def _rater_order(name: str) -> tuple[int, str]:
    return (1 if name == PANEL_RATER else 0, name)


@dataclass(frozen=True)
class RaterScore:
    rater: str
    n: int
    mean: float | None


def rater_scores(data: RaterData) -> list[RaterScore]:
    """Each rater's mean rubric score on the responses every rater fully judged.

    Restricting to the common responses keeps the means comparable; with none in common each
    rater is averaged over its own responses.
    """
    per_rater: dict[str, dict[str, float]] = {}
    for rater, verdicts in data.verdicts.items():
        by_response: dict[str, dict[str, bool]] = defaultdict(dict)
        for (response, criterion), value in verdicts.items():
            by_response[response][criterion] = value
        scores = {}
        for response, values in by_response.items():
            weights = data.weights.get(ResponseKey.parse(response).instance_id, {})
            score = complete_rubric_score(weights, values)
            if score is not None:
                scores[response] = score
        per_rater[rater] = scores
    common = set.intersection(*(set(s) for s in per_rater.values())) if per_rater else set()
    rows = []
    for rater in sorted(per_rater, key=_rater_order):
        scores = per_rater[rater]
        chosen = [scores[r] for r in sorted(common)] if common else list(scores.values())
        mean = sum(chosen) / len(chosen) if chosen else None
        rows.append(RaterScore(rater, len(chosen), mean))
    return rows
