"""Phase 1: corpus construction (paper 3.1, appendix 6.1).

Pure operators (Φ_img, Φ_cmpl, Φ_bal, the 4a rule) over consultations, a 4a screening agent,
a per-run manifest, the engines that run the screening at scale, and the review queue.
"""

from medrealmm.corpus.balance import BalanceResult, Pick, balance, water_fill_cap
from medrealmm.corpus.build import build_corpus
from medrealmm.corpus.config import (
    BalanceConfig,
    CompletenessConfig,
    CorpusConfig,
    PrivacyConfig,
    ReviewConfig,
    load_config,
)
from medrealmm.corpus.engines import Engine
from medrealmm.corpus.filters import completeness_filter, image_filter, privacy_rule
from medrealmm.corpus.manifest import Manifest
from medrealmm.corpus.privacy_agent import PrivacyScreen, screen_privacy
from medrealmm.corpus.reasons import Drop, DropReason, Operator

__all__ = [
    "BalanceConfig",
    "BalanceResult",
    "CompletenessConfig",
    "CorpusConfig",
    "Drop",
    "DropReason",
    "Engine",
    "Manifest",
    "Operator",
    "Pick",
    "PrivacyConfig",
    "PrivacyScreen",
    "ReviewConfig",
    "balance",
    "build_corpus",
    "completeness_filter",
    "image_filter",
    "load_config",
    "privacy_rule",
    "screen_privacy",
    "water_fill_cap",
]
