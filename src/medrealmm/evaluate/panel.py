"""Judge panels: several graders on one run, one derived verdict per criterion.

Each member grades as a grader of its own (its verdicts are its rows, its evaluation its
``EvalSpec``), so a panel run resumes like any other; the panel's verdict is computed from
the members' rows, never asked for. Methods (after autorubric's): ``majority`` and
``weighted`` (a vote, ties to the score-minimising verdict: not met for a positive criterion,
met for a negative one), ``unanimous`` (met only when every voter says met) and ``any`` (met
when one does). A member that cannot assess does not vote; when none votes the panel cannot
assess either. A member's missing or failed verdict leaves the panel's undecided: the case
stays incomplete, never an abstention or a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

from medrealmm.evaluate.provenance import PanelMethod, PanelRef
from medrealmm.io import DataError
from medrealmm.io.yamlfile import load_yaml
from medrealmm.llm import display_name
from medrealmm.schema import Criterion, Verdict, VerdictStatus
from medrealmm.store.keys import SEP

METHODS: tuple[str, ...] = get_args(PanelMethod)
DEFAULT_METHOD: PanelMethod = "majority"


@dataclass(frozen=True)
class Panel:
    """``name`` is the rater its verdicts and scores are stored under."""

    method: PanelMethod
    members: tuple[str, ...]
    weights: Mapping[str, float] = field(default_factory=dict)
    name: str = ""

    def __post_init__(self) -> None:
        if len(self.members) < 2:
            raise ValueError("a panel needs at least two graders")
        if len(set(self.members)) != len(self.members):
            raise ValueError(f"a panel names each grader once: {list(self.members)}")
        if self.method not in METHODS:
            raise ValueError(f"panel method {self.method!r}: use one of {', '.join(METHODS)}")
        unknown = sorted(set(self.weights) - set(self.members))
        if unknown:
            raise ValueError(f"panel weights name graders not on the panel: {unknown}")
        if any(w <= 0 for w in self.weights.values()):
            raise ValueError("panel weights must be positive")
        if not self.name:
            object.__setattr__(self, "name", f"panel-{self.method}({','.join(self.members)})")
        if SEP in self.name:
            raise ValueError(f"a panel name may not contain {SEP!r}: {self.name!r}")

    def weight(self, member: str) -> float:
        return float(self.weights.get(member, 1.0)) if self.method == "weighted" else 1.0

    def ref(self) -> PanelRef:
        return PanelRef(
            method=self.method,
            members=list(self.members),
            weights={m: float(w) for m, w in sorted(self.weights.items())},
        )


def panel_verdict(
    panel: Panel, criterion: Criterion, votes: Mapping[str, Verdict]
) -> Verdict | None:
    """The panel's verdict from its members' (by member name); None while one is missing or
    failed."""
    members = [votes.get(m) for m in panel.members]
    if any(v is None or v.status is VerdictStatus.FAILED for v in members):
        return None
    voters = {m: v.value for m, v in votes.items() if m in panel.members and v.value is not None}
    shown = ", ".join(f"{m}: {_label(votes[m])}" for m in panel.members)
    if not voters:
        return Verdict(
            criterion_id=criterion.id,
            value=None,
            status=VerdictStatus.ABSTAINED,
            rationale=f"{panel.method}: no grader could assess ({shown})",
            grader=panel.name,
        )
    return Verdict(
        criterion_id=criterion.id,
        value=decide(panel, criterion.weight, voters),
        rationale=f"{panel.method} of {len(voters)} ({shown})",
        grader=panel.name,
    )


def decide(panel: Panel, weight: int, voters: Mapping[str, bool]) -> bool:
    """The panel's value from the voters' values; a tie is the score-minimising verdict."""
    if panel.method == "unanimous":
        return all(voters.values())
    if panel.method == "any":
        return any(voters.values())
    met = sum(panel.weight(m) for m, v in voters.items() if v)
    unmet = sum(panel.weight(m) for m, v in voters.items() if not v)
    if met == unmet:
        return weight < 0  # not met for a positive criterion, met (a penalty) for a negative
    return met > unmet


def _label(verdict: Verdict) -> str:
    if verdict.status is VerdictStatus.ABSTAINED:
        return "cannot assess"
    return "met" if verdict.value else "not met"


def panel_from_graders(
    graders: Sequence[str], method: str | None, config: Path | None
) -> tuple[str | None, Panel | None]:
    """(single grader, None) or (None, panel) from ``--grader`` (repeatable) and ``--panel``:
    one name that is a panel of ``config`` is that panel; two or more names are a panel."""
    names = [display_name(g) for g in graders] or [display_name("offline")]
    if len(names) == 1:
        found = load_panels(config).get(names[0]) if config is not None else None
        if found is None:
            if method is not None:
                raise ValueError("--panel needs two or more --grader (or a panel's name)")
            return names[0], None
        if method is not None and method != found.method:
            found = Panel(method, found.members, found.weights, found.name)  # type: ignore[arg-type]
        return None, found
    return None, Panel(method or DEFAULT_METHOD, tuple(names))  # type: ignore[arg-type]


def load_panels(config: Path) -> dict[str, Panel]:
    """``panels: [{name, graders: [...], method, weights: {grader: w}}]`` of a models YAML;
    errors name the file, the entry and the field."""
    data = load_yaml(config) or {}
    panels: dict[str, Panel] = {}
    for index, entry in enumerate(data.get("panels", []) or [], start=1):
        if not isinstance(entry, dict):
            raise DataError(config, index, "panels", "each panel is a mapping")
        for required in ("name", "graders"):
            if required not in entry:
                raise DataError(config, index, f"panels.{required}", "field required")
        try:
            weights = {
                display_name(str(k)): float(v) for k, v in (entry.get("weights") or {}).items()
            }
            panel = Panel(
                method=entry.get("method", DEFAULT_METHOD),
                members=tuple(display_name(str(g)) for g in entry["graders"]),
                weights=weights,
                name=str(entry["name"]),
            )
        except (TypeError, ValueError, AttributeError) as exc:
            raise DataError(config, index, "panels", str(exc)) from None
        panels[panel.name] = panel
    return panels
