"""Departments grouped into major specialty groups (paper 4.4, Figure 6a) by an editable YAML
mapping; raw department names are too many and too thin to read as one heat map."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from medrealmm.io.errors import DataError
from medrealmm.io.yamlfile import load_yaml, parse_yaml

BUILTIN = "specialty_groups.yaml"


class SpecialtyGroup(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    fragments: list[str] = Field(min_length=1)


class SpecialtyGroups(BaseModel):
    model_config = ConfigDict(extra="forbid")

    groups: list[SpecialtyGroup] = Field(min_length=1)
    other: str = "其他"

    def group_of(self, department: str) -> str:
        for group in self.groups:
            if any(fragment in department for fragment in group.fragments):
                return group.name
        return self.other

    def order(self, name: str) -> int:
        names = [g.name for g in self.groups]
        return names.index(name) if name in names else len(names)


def load_specialty_groups(path: Path | str | None = None) -> SpecialtyGroups:
    """The mapping in ``path``, else the bundled one; a bad file names itself and the field."""
    if path is None:
        return builtin_specialty_groups()
    path = Path(path)
    try:
        return SpecialtyGroups.model_validate(load_yaml(path))
    except ValidationError as exc:
        raise DataError.from_validation(path, 1, exc) from None


@cache
def builtin_specialty_groups() -> SpecialtyGroups:
    text = (resources.files("medrealmm.stats") / BUILTIN).read_text(encoding="utf-8")
    return SpecialtyGroups.model_validate(parse_yaml(text, BUILTIN))
