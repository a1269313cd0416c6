"""The chain: every stage in run order. ``medrealmm run`` and ``medrealmm demo`` both run it."""

from __future__ import annotations

from medrealmm.pipeline.contract import Stage
from medrealmm.pipeline.steps.corpus import CorpusBuild, ReviewQueue
from medrealmm.pipeline.steps.deid import Deidentify
from medrealmm.pipeline.steps.evaluate import Evaluate
from medrealmm.pipeline.steps.ingest import Ingest
from medrealmm.pipeline.steps.mccp import ExtractMccp
from medrealmm.pipeline.steps.outputs import Release, Report
from medrealmm.pipeline.steps.rubric import GenerateRubrics

CHAIN: tuple[Stage, ...] = (
    Ingest(),
    CorpusBuild(),
    Deidentify(),
    ReviewQueue(),
    ExtractMccp(),
    GenerateRubrics(),
    Evaluate(),
    Release(),
    Report(),
)


def stage_named(name: str) -> Stage:
    for stage in CHAIN:
        if stage.name == name:
            return stage
    raise ValueError(f"no stage {name!r}; the chain is {', '.join(s.name for s in CHAIN)}")
