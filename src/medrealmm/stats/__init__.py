"""Benchmark statistics: rater agreement, bootstrap CIs, stratified scores (paper 4, 7.3)."""

from medrealmm.stats.agreement import (
    Agreement,
    agreement,
    cohen_kappa,
    gwet_ac1,
    raw_agreement,
)
from medrealmm.stats.bootstrap import Interval, bootstrap_mean_ci
from medrealmm.stats.cases import CaseRecord, case_means, load_scored_cases
from medrealmm.stats.raters import (
    PANEL_RATER,
    AgreementSubset,
    PairAgreement,
    RaterData,
    RaterScore,
    agreement_subset,
    load_raters,
    pairwise_agreement,
    panel_consensus,
    rater_scores,
)
from medrealmm.stats.scoring import complete_rubric_score
from medrealmm.stats.strata import STRATA, Stratum, stratify

__all__ = [
    "PANEL_RATER",
    "STRATA",
    "Agreement",
    "AgreementSubset",
    "CaseRecord",
    "Interval",
    "PairAgreement",
    "RaterData",
    "RaterScore",
    "Stratum",
    "agreement",
    "agreement_subset",
    "bootstrap_mean_ci",
    "case_means",
    "cohen_kappa",
    "complete_rubric_score",
    "gwet_ac1",
    "load_raters",
    "load_scored_cases",
    "pairwise_agreement",
    "panel_consensus",
    "rater_scores",
    "raw_agreement",
    "stratify",
]
