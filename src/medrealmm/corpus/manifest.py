"""A run's manifest: counts in/out per operator, drops by reason, departments per stage.

It holds no paths, timestamps or engine names, so the same input and config give the same
bytes on any machine and either engine.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.corpus.config import CorpusConfig
from medrealmm.corpus.reasons import Drop, Operator
from medrealmm.io import atomic_writer
from medrealmm.losses import Loss

# Corpus snapshots named as in paper 3.1 (C3' is C3 after the 4a removal).
SNAPSHOTS = ("C0", "C1", "C2", "C3", "C3'")
_OPERATOR_ORDER = (Operator.IMAGE, Operator.COMPLETENESS, Operator.BALANCE, Operator.PRIVACY)


class StageCount(BaseModel):
    model_config = ConfigDict(extra="forbid")

    operator: Operator
    input: int
    output: int
    dropped: dict[str, int] = Field(default_factory=dict)
    added_copies: int = 0


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: str
    config: CorpusConfig
    privacy_backend: str | None = None
    privacy_backend_is_baseline: bool = False
    balance_cap: int | None = None
    stages: list[StageCount]
    departments: dict[str, dict[str, int]] = Field(
        description="Department -> {snapshot: count}; the before/after table."
    )

    def write(self, path: Path | str) -> None:
        with atomic_writer(path) as handle:
            handle.write(self.model_dump_json(indent=2) + "\n")

    @classmethod
    def read(cls, path: Path | str) -> Manifest:
        return cls.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))


def stage_counts(c0: int, drops: Iterable[Drop], copies: int) -> list[StageCount]:
    by_operator: dict[Operator, Counter[str]] = {op: Counter() for op in _OPERATOR_ORDER}
    for drop in drops:
        by_operator[drop.operator][drop.reason.value] += 1
    stages: list[StageCount] = []
    current = c0
    for operator in _OPERATOR_ORDER:
        dropped = by_operator[operator]
        added = copies if operator is Operator.BALANCE else 0
        out = current - sum(dropped.values()) + added
        stages.append(
            StageCount(
                operator=operator,
                input=current,
                output=out,
                dropped=dict(sorted(dropped.items())),
                added_copies=added,
            )
        )
        current = out
    return stages


def department_table(snapshots: dict[str, Counter[str]]) -> dict[str, dict[str, int]]:
    names = sorted({name for counts in snapshots.values() for name in counts})
    return {
        name: {snap: snapshots[snap].get(name, 0) for snap in SNAPSHOTS if snap in snapshots}
        for name in names
    }


def corpus_losses(manifest: Manifest) -> list[Loss]:
    """What each screen dropped of its input. Balance is left out: its department cap samples
    on purpose, as configured; the image, completeness and privacy screens judge cases."""
    return [
        Loss(f"corpus {count.operator.value} screen", count.input, sum(count.dropped.values()))
        for count in manifest.stages
        if count.operator is not Operator.BALANCE
    ]
