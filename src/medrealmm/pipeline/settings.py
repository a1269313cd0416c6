"""``pipeline.yaml``: which models each agent role uses and how the chain runs.

Relative paths are read relative to the YAML file. A bad entry is a ``DataError`` naming the
file, line and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from medrealmm.corpus.config import CorpusConfig, yaml_line
from medrealmm.engines import Engine
from medrealmm.evaluate import ONLINE
from medrealmm.io.errors import DataError
from medrealmm.io.yamlfile import load_yaml
from medrealmm.llm import OFFLINE_NAME
from medrealmm.mccp.selection import DEFAULT_MIN_GAP
from medrealmm.store import stages


class ModelRoles(BaseModel):
    """A model name per agent role: 'offline' (the baseline), a name in ``models_config``."""

    model_config = ConfigDict(extra="forbid")

    privacy: str | None = Field(default=OFFLINE_NAME, description="4a screen; null: rule only")
    deid: str | None = Field(default=OFFLINE_NAME, description="LLM pass; null: rules only")
    mccp: str = OFFLINE_NAME
    rubric: str = OFFLINE_NAME
    grader: str = OFFLINE_NAME


class Respondent(BaseModel):
    """One evaluated model (``online`` scores the physician's own reply), images on or off."""

    model_config = ConfigDict(extra="forbid")

    model: str
    images: bool = True


def default_respondents() -> list[Respondent]:
    return [
        Respondent(model=OFFLINE_NAME, images=True),
        Respondent(model=OFFLINE_NAME, images=False),
        Respondent(model=ONLINE),
    ]


class ReleaseSettings(BaseModel):
    """The chain's release step (RUN/release/)."""

    model_config = ConfigDict(extra="forbid")

    allow_unreviewed: bool = Field(
        default=False,
        description="Release cases not past both review passes, or rubrics no physician "
        "approved; recorded in the manifest and the dataset card. Without it the release "
        "waits for review.",
    )
    dua: Path | None = Field(
        default=None,
        description="The dataset's own Data Use Agreement (markdown) shipped as DUA.md; "
        "required except on the demo's run.",
    )


class PipelineSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: Path = Field(description="Folder holding consultations.jsonl and its images/.")
    models_config: Path | None = Field(default=None, description="YAML listing models.")
    models: ModelRoles = Field(default_factory=ModelRoles)
    respondents: list[Respondent] = Field(default_factory=default_respondents)
    corpus: CorpusConfig = Field(default_factory=CorpusConfig)
    limit: int | None = Field(
        default=None,
        ge=1,
        description="Only the first N consultations of the input file: a trial of the whole "
        "chain against a new endpoint (every later stage sees only what they produced).",
    )
    engine: Engine = Engine.LOCAL
    workers: int | None = Field(default=None, ge=1, description="Processes (default: all CPUs).")
    mccp_input: Literal["corpus.deid", "corpus.final"] = Field(
        default=stages.CORPUS_DEID,
        description="corpus.final once physicians approved the corpus; corpus.deid before.",
    )
    mccp_points: int = Field(
        default=1,
        ge=1,
        description="Challenge points per consultation (1: the paper's single t*).",
    )
    mccp_points_slice: int | None = Field(
        default=None,
        ge=1,
        description="Only the first N consultations (by id) take mccp_points; the rest one "
        "(null: every consultation).",
    )
    mccp_min_gap: int = Field(
        default=DEFAULT_MIN_GAP,
        ge=1,
        description="Fewest turns between two challenge points of one consultation.",
    )
    release: ReleaseSettings = Field(default_factory=ReleaseSettings)
    allow_shrink: bool = Field(
        default=False,
        description="Let an input drop more than half of the consultations the run holds "
        "(and every row made from them); without it such a rebuild is refused.",
    )


def load_settings(path: Path | str) -> PipelineSettings:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"pipeline config not found: {path}")
    data = load_yaml(path) or {}
    if not isinstance(data, dict):
        raise DataError(path, 1, "<config>", "expected a mapping of settings")
    try:
        settings = PipelineSettings.model_validate(data)
    except ValidationError as exc:
        line = yaml_line(path, exc.errors()[0]["loc"])
        raise DataError.from_validation(path, line, exc) from None
    base = path.parent
    updates: dict[str, object] = {"input": base / settings.input}
    if settings.models_config is not None:
        updates["models_config"] = base / settings.models_config
    if settings.release.dua is not None:
        updates["release"] = settings.release.model_copy(
            update={"dua": base / settings.release.dua}
        )
    return settings.model_copy(update=updates)
