"""Precision/recall of typed spans and coverage of drawn boxes, for the evaluation set."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from medrealmm.deid.spans import EntityType, Span


@dataclass
class TypeScores:
    tp: Counter[str] = field(default_factory=Counter)  # truth spans found (same type, overlap)
    fn: Counter[str] = field(default_factory=Counter)
    correct: Counter[str] = field(default_factory=Counter)  # predictions matching a truth span
    wrong: Counter[str] = field(default_factory=Counter)

    def add(self, truth: Sequence[Span], predicted: Sequence[Span]) -> None:
        for span in truth:
            hit = any(p.type is span.type and p.overlaps(span) for p in predicted)
            (self.tp if hit else self.fn)[span.type.value] += 1
        for span in predicted:
            hit = any(t.type is span.type and t.overlaps(span) for t in truth)
            (self.correct if hit else self.wrong)[span.type.value] += 1

    def recall(self, kind: str | None = None) -> float:
        tp = self.tp[kind] if kind else sum(self.tp.values())
        fn = self.fn[kind] if kind else sum(self.fn.values())
        return tp / (tp + fn) if tp + fn else float("nan")

    def precision(self, kind: str | None = None) -> float:
        ok = self.correct[kind] if kind else sum(self.correct.values())
        bad = self.wrong[kind] if kind else sum(self.wrong.values())
        return ok / (ok + bad) if ok + bad else float("nan")

    def rows(self) -> Iterable[tuple[str, int, float, float]]:
        for kind in EntityType:
            n = self.tp[kind.value] + self.fn[kind.value]
            yield kind.value, n, self.precision(kind.value), self.recall(kind.value)


def covered(masked: np.ndarray, box: tuple[int, int, int, int], at_least: float = 0.98) -> bool:
    """A truth box counts as masked when nearly all of its pixels are solid black."""
    x0, y0, x1, y1 = box
    region = masked[y0:y1, x0:x1]
    if region.size == 0:
        return True
    return float(np.mean(np.all(region == 0, axis=-1))) >= at_least
