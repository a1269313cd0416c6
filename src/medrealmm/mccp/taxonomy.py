"""Closed label sets for the intent and stage labelers, kept as YAML config data."""

from __future__ import annotations

from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from medrealmm.io.errors import DataError
from medrealmm.io.yamlfile import load_yaml


class Label(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[a-z][a-z0-9_]*$")
    name: str = Field(min_length=1)
    description: str = ""
    keywords: list[str] = Field(default_factory=list)


class Taxonomy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[a-z][a-z0-9_]*$")
    title: str = Field(min_length=1, description="What the labeler is asked to label (Chinese).")
    question: str = Field(min_length=1, description="The question closing the user prompt.")
    default: str
    baseline_image_label: str | None = None
    labels: list[Label] = Field(min_length=2)

    @model_validator(mode="after")
    def _consistent(self) -> Taxonomy:
        ids = [label.id for label in self.labels]
        if len(set(ids)) != len(ids):
            raise ValueError("label ids must be unique")
        for field in ("default", "baseline_image_label"):
            value = getattr(self, field)
            if value is not None and value not in ids:
                raise ValueError(f"{field} {value!r} is not one of the labels")
        return self

    @property
    def ids(self) -> list[str]:
        return [label.id for label in self.labels]

    @cached_property
    def output_schema(self) -> type[BaseModel]:
        """A labeler's reply schema whose ``label`` is restricted to this taxonomy's ids."""
        allowed: Any = Literal[tuple(self.ids)]  # type: ignore[valid-type]
        return create_model(
            f"{self.name.title()}LabelOutput",
            label=(allowed, ...),
            reason=(str, ""),
        )


BUILTIN = ("intent", "stage")


def load_taxonomy(path: Path | str) -> Taxonomy:
    path = Path(path)
    data = load_yaml(path)
    try:
        return Taxonomy.model_validate(data)
    except ValidationError as exc:
        raise DataError.from_validation(path, 1, exc) from None


@cache
def builtin_taxonomy(name: str) -> Taxonomy:
    """The bundled ``intent`` or ``stage`` taxonomy."""
    if name not in BUILTIN:
        raise ValueError(f"no built-in taxonomy {name!r}; choose from {', '.join(BUILTIN)}")
    path = resources.files("medrealmm.mccp") / "taxonomies" / f"{name}.yaml"
    return load_taxonomy(Path(str(path)))
