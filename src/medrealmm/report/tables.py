"""Every table of the report, computed from case records and rater verdicts.

Figures draw from these tables only, so a figure and its CSV can never disagree. Scores are
on the paper's 0-100 scale.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from medrealmm.evaluate.scoring import ModelSummary
from medrealmm.stats.bootstrap import DEFAULT_RESAMPLES, bootstrap_mean_cis
from medrealmm.stats.cases import ONLINE_MODEL, CaseRecord, case_means, consultation_of
from medrealmm.stats.meta_eval import ALL, ALL_PHYSICIANS, MetaRow, physician_spread
from medrealmm.stats.raters import (
    AgreementSubset,
    RaterData,
    agreement_subset,
    pairwise_agreement,
    rater_scores,
)
from medrealmm.stats.strata import STRATA, stratum_order
from medrealmm.stats.weighting import Weighting, weighted
from medrealmm.store.keys import ResponseKey

logger = logging.getLogger(__name__)

SCALE = 100.0
HIST_BINS = 10
STRATIFIED_AXES = (
    "specialty_group",
    "department",
    "subspecialty",
    "intent",
    "stage",
    "image_count",
    "turn_count",
    "position",
)

Condition = tuple[str, bool]  # (model, images)


@dataclass(frozen=True)
class Table:
    name: str  # file stem of its CSV/JSON
    title: str  # Chinese caption
    columns: tuple[str, ...]
    rows: list[dict[str, Any]] = field(default_factory=list)


def condition_label(model: str, images: bool, *, baseline: bool = False) -> str:
    name = "Online（医生原始回复）" if model == ONLINE_MODEL else model
    mode = "图文" if images else "纯文本"
    return f"{name} · {mode}" + ("（离线基线）" if baseline else "")


def _scaled(value: float | None) -> float | None:
    return None if value is None else round(value * SCALE, 3)


def _by_condition(records: Iterable[CaseRecord]) -> dict[Condition, list[CaseRecord]]:
    groups: dict[Condition, list[CaseRecord]] = defaultdict(list)
    for record in records:
        groups[record.condition].append(record)
    return dict(groups)


def headline_conditions(records: Sequence[CaseRecord]) -> list[Condition]:
    """One condition a model: with images where it was run with them, else text-only."""
    modes: dict[str, set[bool]] = defaultdict(set)
    for record in records:
        modes[record.model].add(record.images)
    return sorted((model, True in m) for model, m in modes.items())


def overall_table(
    records: Sequence[CaseRecord],
    *,
    seed: int,
    resamples: int,
    summaries: Sequence[ModelSummary] = (),
    cases: dict[Condition, ConditionCases] | None = None,
    weighting: Weighting = Weighting.CASE,
) -> Table:
    """Score with its CI per condition (each case, or each consultation, weighing 1);
    mean@k and worst@k from ``summaries`` (the results layer's rows, over every sample)
    where given; ``cases``: the records' ``condition_cases``, when the caller has them (the
    breakdowns read the same)."""
    at_k = {(s.model, s.images): s for s in summaries}
    cases = condition_cases(records) if cases is None else cases
    groups = _by_condition(records)
    samples = []
    for condition in groups:
        found = cases[condition]
        samples.append(
            weighted(
                list(found.means.values()),
                [found.consultation[c] for c in found.means],
                weighting,
            )
        )
    intervals = iter(
        bootstrap_mean_cis(
            [sample for sample in samples if sample[0]], seed=seed, resamples=resamples
        )
    )
    rows = []
    for (model, images), group in groups.items():
        means = cases[(model, images)].means
        interval = next(intervals) if means else None
        summary = at_k.get((model, images))
        rows.append(
            {
                "model": model,
                "images": images,
                "label": condition_label(model, images, baseline=group[0].baseline),
                "baseline": group[0].baseline,
                "online": model == ONLINE_MODEL,
                "cases": len(means),
                "consultations": interval.clusters if interval else 0,
                "incomplete": sum(r.score is None for r in group),
                "refused": sum(r.refused for r in group),
                "mean": _scaled(interval.mean) if interval else None,
                "ci_low": _scaled(interval.low) if interval else None,
                "ci_high": _scaled(interval.high) if interval else None,
                "k": summary.k if summary else None,
                "mean_at_k": _scaled(summary.mean_of_k) if summary else None,
                "worst_at_k": _scaled(summary.worst_of_k) if summary else None,
                "cases_at_k": summary.k_instances if summary else None,
            }
        )
    rows.sort(key=lambda r: (r["mean"] is None, -(r["mean"] or 0), r["label"]))
    return Table(
        "overall",
        "总体得分与 95% 自助法置信区间（图 4a；按问诊整体重抽样，同一问诊的多个挑战点一起抽取）；"
        "未完成评分的病例单列，不按 0 分计入均值；拒答（模型拒绝作答）按 0 分计入并单列次数；"
        f"{Weighting(weighting).note}",
        (
            *("label", "model", "images", "baseline", "online"),
            *("cases", "consultations", "incomplete", "refused", "mean", "ci_low", "ci_high"),
            *("k", "mean_at_k", "worst_at_k", "cases_at_k"),
        ),
        rows,
    )


def decomposition_table(records: Sequence[CaseRecord], overall: Table) -> Table:
    """Mean positive criteria met and negative criteria triggered per complete case (4b)."""
    groups = _by_condition(r for r in records if r.score is not None)
    rows = []
    for row in overall.rows:
        group = groups.get((row["model"], row["images"]), [])
        if not group:
            continue
        rows.append(
            {
                "label": row["label"],
                "model": row["model"],
                "images": row["images"],
                "mean": row["mean"],
                "positive_met": round(sum(r.positive_met for r in group) / len(group), 3),
                "negative_triggered": round(
                    sum(r.negative_triggered for r in group) / len(group), 3
                ),
            }
        )
    return Table(
        "decomposition",
        "每例平均满足的正向标准数与触发的负向标准数（图 4b）",
        ("label", "model", "images", "mean", "positive_met", "negative_triggered"),
        rows,
    )


def images_table(overall: Table) -> Table:
    """Models run both with and without the patient's images (Fig 5)."""
    by_model: dict[str, dict[bool, dict[str, Any]]] = defaultdict(dict)
    for row in overall.rows:
        by_model[row["model"]][row["images"]] = row
    rows = []
    for model, modes in by_model.items():
        if set(modes) != {True, False} or None in (modes[True]["mean"], modes[False]["mean"]):
            continue
        with_img, without = modes[True], modes[False]
        rows.append(
            {
                "model": model,
                "with_images": with_img["mean"],
                "with_low": with_img["ci_low"],
                "with_high": with_img["ci_high"],
                "without_images": without["mean"],
                "without_low": without["ci_low"],
                "without_high": without["ci_high"],
                "gain": round(with_img["mean"] - without["mean"], 3),
            }
        )
    rows.sort(key=lambda r: -r["with_images"])
    return Table(
        "images",
        "有图与无图输入的得分对比（图 5）",
        (
            *("model", "with_images", "with_low", "with_high"),
            *("without_images", "without_low", "without_high", "gain"),
        ),
        rows,
    )


def strongest_model(overall: Table, imported: set[Condition]) -> Condition | None:
    """The best-scoring evaluated model (not Online, not imported; a baseline only when no
    model was evaluated), by its Score over its own cases."""
    rows = [
        r
        for r in overall.rows
        if not r["online"] and (r["model"], r["images"]) not in imported and r["mean"] is not None
    ]
    models = [r for r in rows if not r["baseline"]] or rows
    best = max(models, key=lambda r: (r["mean"], r["label"]), default=None)
    return None if best is None else (best["model"], best["images"])


def _deliberate_sample(
    records: Sequence[CaseRecord], overall: Table, imported: set[Condition]
) -> tuple[list[Condition], dict[Condition, dict[str, float]], set[str]]:
    """Table 3's rows (Online, the imported replies, the strongest model), each one's case
    means, and the cases every row scored in full (the table's sample)."""
    labels = {(r["model"], r["images"]): r for r in overall.rows}
    online = [c for c in labels if c[0] == ONLINE_MODEL]
    best = strongest_model(overall, imported)
    conditions = [*online, *sorted(imported & set(labels)), *([best] if best else [])]
    means = {c: case_means(r for r in records if r.condition == c) for c in conditions}
    shared = set.intersection(*(set(m) for m in means.values())) if means else set()
    return conditions, means, shared


def overlap_warning(
    records: Sequence[CaseRecord], overall: Table, imported: set[Condition], subset: Any
) -> str | None:
    """In the paper the deliberate-reply sample (Table 3) and the agreement subset (Table 2)
    are disjoint cases; a sentence saying how many they share, or None when none."""
    _, _, shared = _deliberate_sample(records, overall, imported)
    agreed = {ResponseKey.split(key)[2] for key in subset.responses}
    both = shared & agreed
    if not both:
        return None
    return (
        f"注意：表 3 的 {len(shared)} 个病例中有 {len(both)} 个也在表 2 的评分对象中"
        "（论文中两者不相交），两表不是独立样本"
    )


def deliberative_table(
    records: Sequence[CaseRecord],
    overall: Table,
    imported: set[Condition],
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    weighting: Weighting = Weighting.CASE,
) -> Table:
    """The paper's Table 3: Online, each set of imported replies (physicians answering without
    time pressure) and the strongest model on the same cases, those every row scored in
    full, so a gap between rows is not two missing cases. Each row's Score over all its own
    cases stays beside it."""
    labels = {(r["model"], r["images"]): r for r in overall.rows}
    online = [c for c in labels if c[0] == ONLINE_MODEL]
    conditions, means, shared = _deliberate_sample(records, overall, imported)
    samples = [[means[condition][case] for case in sorted(shared)] for condition in conditions]
    consultation = consultation_of(records)
    clusters = [consultation[case] for case in sorted(shared)]
    intervals = iter(
        bootstrap_mean_cis(
            [weighted(values, clusters, weighting) for values in samples if values],
            seed=seed,
            resamples=resamples,
        )
    )
    rows = []
    for condition, values in zip(conditions, samples, strict=True):
        interval = next(intervals) if values else None
        own = labels[condition]
        role = "online" if condition in online else "imported" if condition in imported else "model"
        rows.append(
            {
                "label": own["label"],
                "model": condition[0],
                "images": condition[1],
                "role": role,
                "cases": len(values),
                "consultations": interval.clusters if interval else 0,
                "mean": _scaled(interval.mean) if interval else None,
                "ci_low": _scaled(interval.low) if interval else None,
                "ci_high": _scaled(interval.high) if interval else None,
                "cases_own": own["cases"],
                "mean_own": own["mean"],
            }
        )
    return Table(
        "deliberative",
        "表 3：Online 原始回复、导入的回复（医生审慎作答等）与最强模型，"
        f"在各行都完整评分的同一批 {len(shared)} 个病例上比较（同一评分标准与评审；"
        "95% CI 按问诊整体重抽样）；末两列为各行在自身全部病例上的得分；"
        f"{Weighting(weighting).note}",
        (
            *("label", "model", "images", "role", "cases", "consultations"),
            *("mean", "ci_low", "ci_high"),
            *("cases_own", "mean_own"),
        ),
        rows,
    )


@dataclass(frozen=True)
class ConditionCases:
    """One condition's records by instance, worked out once for every breakdown (strata are
    the instance's, so each case falls in one stratum of an axis): the complete cases' mean
    scores in case order (``case_means``), and per instance its incomplete records, its
    consultation and a record to read its strata from."""

    means: dict[str, float]
    first: dict[str, CaseRecord]
    incomplete: dict[str, int]
    consultation: dict[str, str]

    @cached_property
    def aligned(self) -> AlignedCases:
        """The same, as arrays over the cases in sorted order (every breakdown reads them)."""
        ids = sorted(self.first)
        codes: dict[str, int] = {}
        return AlignedCases(
            [self.first[case] for case in ids],
            np.array([case in self.means for case in ids], dtype=bool),
            np.array([self.means.get(case, 0.0) for case in ids], dtype=np.float64),
            np.array(
                [codes.setdefault(self.consultation[case], len(codes)) for case in ids],
                dtype=np.int64,
            ),
            np.array([self.incomplete.get(case, 0) for case in ids], dtype=np.int64),
        )


@dataclass(frozen=True)
class AlignedCases:
    """One condition's cases in sorted order: a record to read strata from, whether the case
    has a mean score and which (0 where none), its consultation (as a code), its incomplete
    records."""

    records: list[CaseRecord]
    scored: np.ndarray
    means: np.ndarray
    consultation: np.ndarray
    incomplete: np.ndarray


def condition_cases(records: Iterable[CaseRecord]) -> dict[Condition, ConditionCases]:
    found = {}
    for condition, group in _by_condition(records).items():
        first: dict[str, CaseRecord] = {}
        incomplete: dict[str, int] = defaultdict(int)
        for record in group:
            first.setdefault(record.instance_id, record)
            if record.score is None:
                incomplete[record.instance_id] += 1
        found[condition] = ConditionCases(
            case_means(group), first, dict(incomplete), consultation_of(group)
        )
    return found


def _headline(cases: dict[Condition, ConditionCases]) -> set[Condition]:
    """``headline_conditions`` of the records ``cases`` was made from."""
    modes: dict[str, set[bool]] = defaultdict(set)
    for model, images in cases:
        modes[model].add(images)
    return {(model, True in m) for model, m in modes.items()}


def stratified_table(
    records: Sequence[CaseRecord],
    axis: str,
    overall: Table,
    cases: dict[Condition, ConditionCases] | None = None,
    weighting: Weighting = Weighting.CASE,
) -> Table:
    """Per stratum of ``axis`` and headline condition, best first; ``cases``: the records'
    ``condition_cases``, when the caller has them (every axis reads the same)."""
    cases = condition_cases(records) if cases is None else cases
    headline = _headline(cases)
    ranked = [(r["model"], r["images"]) for r in overall.rows]
    labels = {(r["model"], r["images"]): r["label"] for r in overall.rows}
    stratum = STRATA[axis]
    keys: dict[Any, tuple[Any, str]] = {}  # attribute value -> (order, label), as ``stratify``
    members: dict[tuple[Any, str], dict[Condition, np.ndarray]] = defaultdict(dict)
    for condition in headline:
        values = [getattr(r, stratum.attribute) for r in cases[condition].aligned.records]
        for value in set(values) - keys.keys():
            keys[value] = stratum.of_value(value)
        for key, at in _positions(values, keys).items():
            members[key][condition] = at  # the stratum's cases, in sorted order
    rows = []
    for key in sorted(members, key=stratum_order):
        for condition in ranked:
            at = members[key].get(condition)
            if condition not in headline or at is None:
                continue
            found = cases[condition].aligned
            scored = at[found.scored[at]]
            means = found.means[scored].tolist()  # summed in case order, as one by one
            count = len(means)
            if weighting == Weighting.CONSULTATION:
                codes = found.consultation[scored].astype(str).tolist()
                means = weighted(means, codes, weighting)[0]
            rows.append(
                {
                    "stratum": key[1],
                    "label": labels[condition],
                    "model": condition[0],
                    "images": condition[1],
                    "cases": count,
                    "consultations": int(np.count_nonzero(np.bincount(found.consultation[scored]))),
                    "incomplete": int(found.incomplete[at].sum()),
                    "mean": _scaled(sum(means) / len(means)) if means else None,
                }
            )
    title = STRATA[axis].title
    return Table(
        f"by_{axis}",
        f"按{title}分层的平均得分（问诊数：病例背后的问诊，同一问诊可有多个挑战点）；"
        f"{Weighting(weighting).note}",
        ("stratum", "label", "model", "images", "cases", "consultations", "incomplete", "mean"),
        rows,
    )


def _positions(values: list[Any], keys: dict[Any, Any]) -> dict[Any, np.ndarray]:
    """Each key's positions in ``values`` (as ``keys`` maps them), ascending."""
    distinct = set(values)
    index = {key: i for i, key in enumerate(dict.fromkeys(keys[v] for v in distinct))}
    code = {value: index[keys[value]] for value in distinct}
    codes = np.fromiter(map(code.__getitem__, values), dtype=np.int64, count=len(values))
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(index) + 1))
    return {key: order[bounds[i] : bounds[i + 1]] for key, i in index.items()}


def histogram_table(
    records: Sequence[CaseRecord],
    overall: Table,
    cases: dict[Condition, ConditionCases] | None = None,
) -> Table:
    """Per-case score counts in ten equal bins of 0-100 (Fig 7); 100 falls in the last bin."""
    cases = condition_cases(records) if cases is None else cases
    headline = _headline(cases)
    rows = []
    for row in overall.rows:
        condition = (row["model"], row["images"])
        if condition not in headline:
            continue
        counts = [0] * HIST_BINS
        for score in cases[condition].means.values():
            counts[min(int(score * HIST_BINS), HIST_BINS - 1)] += 1
        for index, count in enumerate(counts):
            width = SCALE / HIST_BINS
            rows.append(
                {
                    "label": row["label"],
                    "bin_low": index * width,
                    "bin_high": (index + 1) * width,
                    "cases": count,
                }
            )
    return Table(
        "histogram",
        "单病例得分分布（图 7）",
        ("label", "bin_low", "bin_high", "cases"),
        rows,
    )


def agreement_table(
    data: RaterData, subset: AgreementSubset | None = None, *, rules: bool = False
) -> Table:
    """Table 2 over the declared subset: LLM-graded criteria, or the code-checked rules."""
    subset = subset or agreement_subset(data)
    rows = [
        {
            "rater_a": p.rater_a,
            "rater_b": p.rater_b,
            "criteria": p.subset,
            "n": p.n,
            "ac1": None if p.ac1 is None else round(p.ac1, 4),
            "kappa": None if p.kappa is None else round(p.kappa, 4),
            "agreement": None if p.observed is None else round(p.observed, 4),
        }
        for p in pairwise_agreement(data, subset, rules=rules)
    ]
    if rules:
        name = "agreement_rules"
        title = "规则标准（代码判定的长度限制）的一致性：单列，不计入表 2"
    else:
        name = "agreement"
        title = (
            "评分者两两一致性（表 2）：仅 LLM 评分标准，Gwet AC1、Cohen κ 与原始一致率，"
            f"按全部 / 正向 / 负向标准拆分；评分对象：{subset.label()}"
        )
    return Table(
        name, title, ("rater_a", "rater_b", "criteria", "n", "ac1", "kappa", "agreement"), rows
    )


def agreement_subset_table(subset: AgreementSubset) -> Table:
    """What Table 2 is computed on, declared once so every row is read the same way."""
    row = {
        "model": subset.model,
        "images": subset.images,
        "raters": "、".join(subset.raters),
        "responses": len(subset.responses),
        "llm_criteria": len(subset.items),
        "rule_criteria": len(subset.rule_items),
    }
    return Table(
        "agreement_subset",
        "表 2 的评分对象：同一被评模型在所有评分者（含医生小组）都完整评分的病例上的回复",
        ("model", "images", "raters", "responses", "llm_criteria", "rule_criteria"),
        [row],
    )


def rater_score_table(data: RaterData, subset: AgreementSubset | None = None) -> Table:
    subset = subset or agreement_subset(data)
    rows = [
        {"rater": s.rater, "responses": s.n, "mean": _scaled(s.mean)}
        for s in rater_scores(data, subset)
    ]
    return Table(
        "rater_scores",
        f"各评分者（LLM 评审与医生小组）在同一批回复上的平均得分（表 2）：{subset.label()}",
        ("rater", "responses", "mean"),
        rows,
    )


META_COLUMNS = (
    *("rater", "kind", "reference", "axis", "stratum", "items", "pairs", "cases", "consultations"),
    *("balanced_f1", "f1_low", "f1_high", "f1_met", "f1_not_met"),
    *("precision_met", "recall_met", "precision_not_met", "recall_not_met"),
)


def meta_eval_tables(rows: Sequence[MetaRow], *, simulated: bool = False) -> list[Table]:
    """The meta-evaluation: every row (``meta_eval``), and the headline view (each rater
    against all physicians, over all items) with the physicians' own spread beside it."""
    note = "（医生标签为模拟数据，仅演示计算）" if simulated else ""
    undefined = sum(r.balanced_f1 is None for r in rows)
    if undefined:
        note += f"；{undefined} 行无 balanced F1（某类未被使用，留空，不计入）"
    every = Table(
        "meta_eval",
        "评分器元评测：各评分器与每位医生、全体医生逐条标准比较的精确率、召回率与 F1"
        "（满足 / 未满足两类及其均值 balanced F1，按问诊整体重抽样的自助法 95% CI），"
        "按正负向与类别分层；某类从未被评分者或参照医生使用时该类 F1 与 balanced F1 留空（—），"
        "同 simple-evals；"
        f"医生行为该医生对其他医生{note}",
        META_COLUMNS,
        [asdict(r) for r in rows],
    )
    spread = physician_spread(rows)
    head = [
        {
            **asdict(r),
            "inside_spread": None
            if spread is None or r.balanced_f1 is None
            else spread[0] <= r.balanced_f1 <= spread[1],
        }
        for r in rows
        if r.reference == ALL_PHYSICIANS and r.axis == ALL
    ]
    headline = Table(
        "meta_eval_headline",
        "评分器与医生的一致性（balanced F1，对全体医生）；医生间的范围为"
        + ("—" if spread is None else f" {spread[0]:.3f}–{spread[1]:.3f}")
        + note,
        (
            *("rater", "kind", "items", "pairs", "cases", "consultations"),
            *("balanced_f1", "f1_low", "f1_high", "f1_met", "f1_not_met", "inside_spread"),
        ),
        head,
    )
    return [headline, every]


def build_tables(
    records: Sequence[CaseRecord],
    raters: RaterData,
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    summaries: Sequence[ModelSummary] = (),
    imported: Iterable[Condition] = (),
    weighting: Weighting = Weighting.CASE,
) -> dict[str, Table]:
    """``records`` are the primary grader's sample-0 records, ``summaries`` the results
    layer's rows for mean@k / worst@k, ``imported`` the conditions whose replies were
    imported (Table 3); ``raters`` hold every judge and the panel."""
    every = condition_cases(records)
    overall = overall_table(
        records,
        seed=seed,
        resamples=resamples,
        summaries=summaries,
        cases=every,
        weighting=weighting,
    )
    subset = agreement_subset(raters)
    imported = set(imported)
    headline = set(headline_conditions(records))
    shown = [r for r in records if r.condition in headline]  # all the breakdowns read
    cases = {condition: found for condition, found in every.items() if condition in headline}
    deliberate = []
    if imported:
        table3 = deliberative_table(
            records, overall, imported, seed=seed, resamples=resamples, weighting=weighting
        )
        warning = overlap_warning(records, overall, imported, subset)
        if warning:
            logger.warning("Table 3 and Table 2 share cases: %s", warning)
            table3 = replace(table3, title=f"{table3.title}；{warning}")
        deliberate.append(table3)
    tables = [
        overall,
        *deliberate,
        decomposition_table(records, overall),
        images_table(overall),
        *(stratified_table(shown, axis, overall, cases, weighting) for axis in STRATIFIED_AXES),
        histogram_table(shown, overall, cases),
        agreement_subset_table(subset),
        rater_score_table(raters, subset),
        agreement_table(raters, subset),
        agreement_table(raters, subset, rules=True),
    ]
    return {t.name: t for t in tables}
