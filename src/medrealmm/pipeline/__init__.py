"""One chain of stages with one contract, run by ``medrealmm run`` and ``medrealmm demo``."""

from medrealmm.pipeline.chain import CHAIN, stage_named
from medrealmm.pipeline.contract import Stage, StageContext, StageReport
from medrealmm.pipeline.demo import run_demo
from medrealmm.pipeline.runner import MissingInputError, run_chain, run_stage
from medrealmm.pipeline.settings import PipelineSettings, load_settings

__all__ = [
    "CHAIN",
    "MissingInputError",
    "PipelineSettings",
    "Stage",
    "StageContext",
    "StageReport",
    "load_settings",
    "run_chain",
    "run_demo",
    "run_stage",
    "stage_named",
]
