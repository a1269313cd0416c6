"""Criterion-level verdicts per rater (LLM judges and the physician panel) and their pairwise
agreement, overall and split by positive vs negative criteria (paper 4.5, Table 2)."""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from medrealmm.rubric.rounds import evaluation_rubrics, rubric_digests
from medrealmm.schema import CriterionKind
from medrealmm.stats.agreement import agreement_of_counts
from medrealmm.stats.cases import withdrawn_instances
from medrealmm.stats.scoring import score_of
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import SEP, ResponseKey, VerdictKey

PANEL_RATER = "医生小组"
SUBSETS = ("all", "positive", "negative")

Item = tuple[str, str]  # (response key, criterion id)


@dataclass
class RaterData:
    verdicts: dict[str, dict[Item, bool]] = field(default_factory=dict)  # rater -> item -> v
    weights: dict[str, dict[str, int]] = field(default_factory=dict)  # instance -> crit -> w
    rules: dict[str, set[str]] = field(default_factory=dict)  # instance -> rule criterion ids

    def weight(self, item: Item) -> int | None:
        instance_id = ResponseKey.parse(item[0]).instance_id
        return self.weights.get(instance_id, {}).get(item[1])

    def item_weights(self, items: Iterable[Item]) -> list[int | None]:
        """``weight`` of each item, each reply's instance looked up once (a reply's items
        come together)."""
        found: list[int | None] = []
        response: str | None = None
        weights: Mapping[str, int] = {}
        for item in items:
            if item[0] != response:
                response = item[0]
                weights = self.weights.get(ResponseKey.parse(response).instance_id, {})
            found.append(weights.get(item[1]))
        return found

    def is_rule(self, item: Item) -> bool:
        return item[1] in self.rules.get(ResponseKey.parse(item[0]).instance_id, set())


@dataclass(frozen=True)
class PairAgreement:
    rater_a: str
    rater_b: str
    subset: str  # all | positive | negative criteria
    n: int
    observed: float | None
    ac1: float | None
    kappa: float | None


@dataclass(frozen=True)
class AgreementSubset:
    """Table 2's one declared item set: one evaluated condition's sample-0 replies that every
    rater (judges and, when present, the panel) judged on every LLM-graded criterion.

    The paper compares graders on one model's replies to the same cases; pooling models, or
    letting each row pick its own items, would compare different things.
    """

    model: str | None
    images: bool | None
    raters: tuple[str, ...]
    responses: tuple[str, ...]
    items: tuple[Item, ...]  # LLM-graded criteria
    rule_items: tuple[Item, ...]  # code-checked rules, reported separately

    def label(self) -> str:
        if self.model is None:
            return "无共同评分的回复"
        images = "有图" if self.images else "无图"
        return (
            f"{self.model}（{images}）的 {len(self.responses)} 条回复，"
            f"{len(self.items)} 条 LLM 评分标准"
        )


def panel_consensus(by_reviewer: Mapping[str, Mapping[Item, bool]]) -> dict[Item, bool]:
    """One panel verdict per item: the reviewers' majority; a tie is no consensus and dropped."""
    # counted, not listed: a panel of three gives a quarter of a million votes
    votes: Counter[Item] = Counter()
    yes: Counter[Item] = Counter()
    for verdicts in by_reviewer.values():
        votes.update(verdicts.keys())
        yes.update([item for item, value in verdicts.items() if value])
    return {item: yes[item] * 2 > n for item, n in sorted(votes.items()) if yes[item] * 2 != n}


VerdictRow = tuple[str, str, str, bool, str | None]  # rater, response, criterion, value, version


def verdict_rows(
    store: RunStore,
    stage: str,
    responses: Collection[str] | None = None,
    *,
    versions: bool = True,
) -> Iterator[VerdictRow]:
    """Every judged verdict of ``stage`` (a failed one is no judgement, not a "no") as
    (rater, response key, criterion id, value, criterion version): two fields read per row,
    no model built, and one response-key string shared by its criteria. ``responses``: only
    the verdicts on these replies, each read as a range of the key index. ``versions=False``
    leaves the version out (None), one field fewer to extract from every row."""
    names = ("value", "criterion_version") if versions else ("value",)
    if responses is None:
        rows = store.fields(stage, names)
    else:
        ordered = sorted(responses)
        prefixes = (
            f"{rater}{SEP}{response}{SEP}"
            for rater in store.key_heads(stage, SEP)
            for response in ordered
        )
        rows = store.fields_under(stage, prefixes, names)
    shared: dict[str, str] = {}
    intern = sys.intern
    for row in rows:
        value = row[1]
        if value is None:
            continue
        key = row[0]
        head, _, criterion = key.rpartition(SEP)
        rater, _, response = head.partition(SEP)
        if not (rater and response and criterion):
            VerdictKey.parse(key)  # says what is wrong with it
        known = shared.get(response)
        if known is None:
            ResponseKey.parse(response)  # a malformed key is a broken contract: say so now
            known = shared[response] = response
        yield rater, known, intern(criterion), bool(value), row[2] if versions else None


def _read_verdicts(
    store: RunStore, stage: str, responses: Collection[str] | None = None
) -> dict[str, dict[Item, bool]]:
    out: dict[str, dict[Item, bool]] = {}
    mine: dict[Item, bool] = {}  # the verdicts of the row before's rater (rows come by rater)
    last: str | None = None
    for rater, response, criterion, value, _ in verdict_rows(
        store, stage, responses, versions=False
    ):
        if rater != last:
            mine, last = out.setdefault(rater, {}), rater
        mine[(response, criterion)] = value
    return out


def panel_verdicts(store: RunStore) -> dict[str, dict[Item, bool]]:
    """Each reviewer's panel verdicts (PANEL_VERDICT), read once while the store is unchanged:
    Table 2 and the meta-evaluation both start from them. Callers must not modify them."""
    return store.memo("panel_verdicts", lambda: _read_verdicts(store, stages.PANEL_VERDICT))


def panel_reply_verdicts(store: RunStore) -> list[VerdictRow]:
    """``verdict_rows`` of EVAL_VERDICT on every reply the panel judged, read once while the
    store is unchanged: Table 2 and the meta-evaluation each keep those on their own replies
    (a subset of these, in the same order as reading it alone). Callers must not modify it."""

    def read() -> list[VerdictRow]:
        replies = {item[0] for found in panel_verdicts(store).values() for item in found}
        return list(verdict_rows(store, stages.EVAL_VERDICT, replies)) if replies else []

    return store.memo("panel_reply_verdicts", read)


def _judged_any(store: RunStore, rater: str) -> bool:
    rows = store.fields_under(stages.EVAL_VERDICT, [rater + SEP], ("value",), page=100)
    return any(value is not None for _, value in rows)


def load_raters(store: RunStore, *, table2: bool = False) -> RaterData:
    """Judges from EVAL_VERDICT; the panel (all reviewers, one consensus) from PANEL_VERDICT.

    ``table2``: with a panel, the judges' verdicts only on the replies the panel judged, all
    that ``agreement_subset`` can choose (every rater, panel included, must have judged a
    reply in full), so a large run's other verdicts are never read."""
    panel = panel_consensus(panel_verdicts(store))
    responses = {item[0] for item in panel} if table2 and panel else None
    if responses is None:
        data = RaterData(verdicts=_read_verdicts(store, stages.EVAL_VERDICT))
    else:  # the panel's replies (consensus or not) hold these
        chosen: dict[str, dict[Item, bool]] = defaultdict(dict)
        for rater, response, criterion, value, _ in panel_reply_verdicts(store):
            if response in responses:
                chosen[rater][(response, criterion)] = value
        data = RaterData(verdicts=dict(chosen))
    if responses is not None:  # a judge is a rater when it judged anything, anywhere
        found = data.verdicts
        data.verdicts = {  # in key order, as a full read gives them
            rater: found.get(rater, {})
            for rater in store.key_heads(stages.EVAL_VERDICT, SEP)
            if rater in found or _judged_any(store, rater)
        }
    if panel:
        data.verdicts[PANEL_RATER] = panel
    gone = withdrawn_instances(store)
    if gone:  # a withdrawn consultation leaves Table 2 too
        data.verdicts = {
            rater: {i: v for i, v in items.items() if ResponseKey.split(i[0])[2] not in gone}
            for rater, items in data.verdicts.items()
        }
    rubrics = rubric_digests(store)
    data.weights = {i: {c.id: c.weight for c in r.criteria} for i, r in rubrics.items()}
    data.rules = {
        i: {c.id for c in r.criteria if c.kind is CriterionKind.RULE} for i, r in rubrics.items()
    }
    return data


def scored_rubric_weights(store: RunStore) -> dict[str, dict[str, int]]:
    """Criterion weights of the rubric each instance was graded against: the approved
    RUBRIC_FINAL, else its latest refinement round (the rule evaluation applies)."""
    latest = evaluation_rubrics(store)
    return {i: {c.id: c.weight for c in rubric.criteria} for i, rubric in latest.items()}


def agreement_subset(data: RaterData, condition: tuple[str, bool] | None = None) -> AgreementSubset:
    """The sample-0 responses of ``condition`` (model, images) every rater judged in full on
    the LLM criteria; without ``condition``, the one with the most such responses (ties by
    name). One reply per case, as the paper calls each model once."""
    raters = tuple(sorted(data.verdicts, key=_rater_order))
    judged = [data.verdicts[r] for r in raters]
    complete: dict[tuple[str, bool], list[str]] = defaultdict(list)
    for response in sorted({item[0] for v in data.verdicts.values() for item in v}):
        parsed = ResponseKey.parse(response)
        weights = data.weights.get(parsed.instance_id)
        if not weights or parsed.sample != 0:
            continue  # one reply per case (sample 0): a k-sample run's extras are not pooled
        rules = data.rules.get(parsed.instance_id, ())
        llm = [(response, c) for c in weights if c not in rules]
        if judged and all(all(map(found.__contains__, llm)) for found in judged):
            complete[(parsed.model, parsed.images)].append(response)
    if condition is None and complete:
        condition = min(complete, key=lambda c: (-len(complete[c]), c[0], not c[1]))
    responses = tuple(complete.get(condition, [])) if condition else ()
    items: list[Item] = []
    rule_items: list[Item] = []
    for response in responses:
        instance_id = ResponseKey.parse(response).instance_id
        rules = data.rules.get(instance_id, ())
        for criterion in data.weights[instance_id]:
            item = (response, criterion)
            if criterion in rules:  # ``is_rule``
                if all(item in found for found in judged):
                    rule_items.append(item)
            else:
                items.append(item)
    model, images = condition if condition and responses else (None, None)
    return AgreementSubset(model, images, raters, responses, tuple(items), tuple(rule_items))


def _in_subset(weight: int | None, subset: str) -> bool:
    if subset == "all":
        return True
    if weight is None:
        return False
    return weight > 0 if subset == "positive" else weight < 0


def pairwise_agreement(
    data: RaterData, subset: AgreementSubset | None = None, *, rules: bool = False
) -> list[PairAgreement]:
    """Every rater pair over the same declared items (LLM-graded criteria by default;
    ``rules=True`` gives the code-checked ones, which every grader answers alike)."""
    subset = subset or agreement_subset(data)
    chosen = subset.rule_items if rules else subset.items
    weights = data.item_weights(chosen)  # once per item, not per pair and sign
    by_sign = {
        sign: [i for i, w in zip(chosen, weights, strict=True) if _in_subset(w, sign)]
        for sign in SUBSETS
    }
    # each rater's verdicts on each sign's items, looked up once, not once per pair, as an
    # array: a pair's counts are then two array operations (``agreement_of_counts``)
    values = {
        (rater, sign): np.fromiter(
            map(data.verdicts[rater].__getitem__, by_sign[sign]), bool, len(by_sign[sign])
        )
        for rater in subset.raters
        for sign in SUBSETS
    }
    positives = {key: int(np.count_nonzero(found)) for key, found in values.items()}
    rows = []
    for a, b in combinations(subset.raters, 2):
        for sign in SUBSETS:
            n = len(by_sign[sign])
            if not n:
                rows.append(PairAgreement(a, b, sign, 0, None, None, None))
                continue
            both = int(np.count_nonzero(values[(a, sign)] & values[(b, sign)]))
            stats = agreement_of_counts(n, positives[(a, sign)], positives[(b, sign)], both)
            rows.append(PairAgreement(a, b, sign, stats.n, stats.observed, stats.ac1, stats.kappa))
    return rows


def _rater_order(name: str) -> tuple[int, str]:
    return (1 if name == PANEL_RATER else 0, name)


@dataclass(frozen=True)
class RaterScore:
    rater: str
    n: int
    mean: float | None


def rater_scores(data: RaterData, subset: AgreementSubset | None = None) -> list[RaterScore]:
    """Each rater's mean rubric score over the declared subset's responses (the same for all).

    A rule criterion a rater left unjudged takes the value another rater recorded: rules are
    checked in code, so every grader's value is the same. A response is scored as
    ``complete_rubric_score`` scores it (every criterion judged), from the same two sums.
    """
    subset = subset or agreement_subset(data)
    judged = [(rater, data.verdicts[rater]) for rater in subset.raters]
    scores: dict[str, list[float]] = {rater: [] for rater in subset.raters}
    for response in subset.responses:  # its items and positive weight once for all raters
        weights = data.weights[ResponseKey.parse(response).instance_id]
        if not weights:  # no criteria: no score
            continue
        pairs = [((response, criterion), weight) for criterion, weight in weights.items()]
        positive = sum(max(weight, 0) for weight in weights.values())
        for rater, mine in judged:
            earned = 0
            for item, weight in pairs:
                value = mine.get(item)
                if value is None:
                    value = next((v[item] for v in data.verdicts.values() if item in v), None)
                    if value is None:
                        break  # a criterion nobody judged: incomplete, no score
                if value:
                    earned += weight
            else:
                scores[rater].append(score_of(earned, positive))
    rows = []
    for rater, found in scores.items():
        mean = sum(found) / len(found) if found else None
        rows.append(RaterScore(rater, len(found), mean))
    return rows
