"""Physician validation of extracted MCCPs (paper 6.3): a seeded sample, accept/reject, rate.

The review web app and the CSV round trip share this API. Decisions live in the run store
under ``mccp.validation`` keyed by reviewer and instance, so a re-import replaces rather than
double counts, and the drawn sample is kept in store meta so every reviewer sees the same N.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.io import DataError, atomic_writer
from medrealmm.llm import dialogue_text
from medrealmm.schema import Instance
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import ValidationKey

SAMPLE_META = stages.MCCP_SAMPLE_META
CSV_COLUMNS = (
    "instance_id",
    "consultation_id",
    "department",
    "t_star",
    "intent",
    "stage",
    "dialogue",
    "physician_reply",
    "decision",
    "reviewer",
    "note",
)
ACCEPT_WORDS = frozenset({"accept", "accepted", "1", "yes", "y", "true", "接受", "通过", "是"})
REJECT_WORDS = frozenset({"reject", "rejected", "0", "no", "n", "false", "拒绝", "不通过", "否"})


class ValidationDecision(BaseModel):
    """One physician's binary judgement: does this MCCP meet both criteria A and M?"""

    model_config = ConfigDict(extra="forbid")

    instance_id: str = Field(min_length=1)
    reviewer: str = Field(min_length=1)
    accept: bool
    note: str = ""
    decided_at: datetime


def decision_key(reviewer: str, instance_id: str) -> str:
    return ValidationKey(reviewer, instance_id).format()


def draw_validation_sample(store: RunStore, n: int, seed: int = 0) -> list[str]:
    """N instance ids drawn with ``seed`` from the sorted ids; kept in meta for the review app."""
    if n < 1:
        raise ValueError("the validation sample needs at least one instance")
    ids = sorted(store.keys(stages.MCCP_INSTANCE))
    if not ids:
        raise ValueError("the run store has no MCCP instances yet; run `mccp extract` first")
    sample = random.Random(seed).sample(ids, min(n, len(ids)))
    store.set_meta(SAMPLE_META, {"n": n, "seed": seed, "ids": sample})
    return sample


def validation_sample(store: RunStore) -> list[str]:
    """The ids drawn last, in draw order; empty when none was drawn."""
    return list((store.get_meta(SAMPLE_META) or {}).get("ids", []))


def record_decision(
    store: RunStore, instance_id: str, reviewer: str, accept: bool, note: str = ""
) -> ValidationDecision:
    if instance_id not in store.keys(stages.MCCP_INSTANCE):
        raise KeyError(f"no MCCP instance {instance_id!r} in this run")
    decision = ValidationDecision(
        instance_id=instance_id,
        reviewer=reviewer,
        accept=accept,
        note=note,
        decided_at=datetime.now(UTC),
    )
    store.put(stages.MCCP_VALIDATION, decision_key(reviewer, instance_id), decision)
    return decision


def decisions(store: RunStore) -> list[ValidationDecision]:
    return list(store.iter(stages.MCCP_VALIDATION, ValidationDecision))


@dataclass
class ValidationSummary:
    """Acceptance per case over the drawn sample (paper 6.3): a case is accepted when every
    physician who judged it accepted it; cases they disagree on are counted apart. Decisions
    on instances outside the sample are counted, never pooled into the rate."""

    decided: int = 0  # sampled cases with at least one decision
    accepted: int = 0  # ... every decision on which accepts
    disagreements: int = 0  # ... with both an accept and a reject
    sample_size: int = 0
    undecided: int = 0
    outside_sample: int = 0  # decisions on instances not in the sample
    by_reviewer: dict[str, tuple[int, int]] = field(default_factory=dict)  # (accepted, decided)

    @property
    def rate(self) -> float | None:
        """Accepted cases over decided cases of the sample; None before the first decision."""
        return self.accepted / self.decided if self.decided else None

    def lines(self) -> list[str]:
        rate = "n/a" if self.rate is None else f"{self.rate:.1%}"
        head = (
            f"MCCP acceptance: {self.accepted}/{self.decided} cases = {rate}"
            f" (sample {self.sample_size}, undecided {self.undecided},"
            f" physicians disagree on {self.disagreements},"
            f" decisions outside the sample {self.outside_sample})"
        )
        rows = [f"  {r}: {a}/{d}" for r, (a, d) in sorted(self.by_reviewer.items())]
        return [head, *rows]


def summarize_validation(store: RunStore) -> ValidationSummary:
    sample = validation_sample(store)
    in_sample = set(sample)
    votes: dict[str, list[bool]] = {}
    summary = ValidationSummary(sample_size=len(sample))
    for decision in decisions(store):
        if decision.instance_id not in in_sample:
            summary.outside_sample += 1
            continue
        votes.setdefault(decision.instance_id, []).append(decision.accept)
        accepted, decided = summary.by_reviewer.get(decision.reviewer, (0, 0))
        summary.by_reviewer[decision.reviewer] = (accepted + decision.accept, decided + 1)
    summary.decided = len(votes)
    summary.accepted = sum(all(v) for v in votes.values())
    summary.disagreements = sum(any(v) and not all(v) for v in votes.values())
    summary.undecided = len(in_sample - set(votes))
    return summary


def _row(instance: Instance) -> dict[str, str]:
    return {
        "instance_id": instance.id,
        "consultation_id": instance.consultation_id,
        "department": instance.department,
        "t_star": str(instance.t_star),
        "intent": instance.intent or "",
        "stage": instance.stage or "",
        "dialogue": dialogue_text(instance.context),
        "physician_reply": instance.target_reply,
        "decision": "",
        "reviewer": "",
        "note": "",
    }


def export_validation_csv(store: RunStore, path: Path | str, n: int, seed: int = 0) -> int:
    """A spreadsheet for physicians: fill ``decision`` with accept/reject (or 接受/拒绝).

    The physician reply is included on purpose: validators judge whether it is substantive
    clinical engagement. They are neither evaluated models nor graders.
    """
    ids = draw_validation_sample(store, n, seed)
    instances: Iterable[Instance] = (
        instance
        for instance_id in ids
        if (instance := store.get(stages.MCCP_INSTANCE, instance_id, Instance)) is not None
    )
    count = 0
    with atomic_writer(path) as handle:
        handle.write("\ufeff")  # BOM so spreadsheet tools read the Chinese text as UTF-8
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for instance in instances:
            writer.writerow(_row(instance))
            count += 1
    return count


def parse_decision(value: str) -> bool | None:
    """True/False for a recognised word, None for blank (not yet decided); else ValueError."""
    word = value.strip().lower()
    if not word:
        return None
    if word in ACCEPT_WORDS:
        return True
    if word in REJECT_WORDS:
        return False
    raise ValueError(f"decision {value!r} is neither accept nor reject")


def import_validation_csv(
    store: RunStore, path: Path | str, reviewer: str | None = None
) -> ValidationSummary:
    """Record every filled-in decision; blank rows stay undecided. Bad rows name file and line.

    The file is checked whole before anything is recorded, so a typo on line 150 does not
    leave the first 148 decisions half imported.
    """
    path = Path(path)
    known = store.keys(stages.MCCP_INSTANCE)
    pending: list[tuple[str, str, bool, str]] = []
    with path.open("r", encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"instance_id", "decision"} - set(reader.fieldnames or [])
        if missing:
            raise DataError(path, 1, sorted(missing)[0], "column missing from the header")
        row_end = reader.line_num
        for row in reader:
            line, row_end = row_end + 1, reader.line_num  # rows may span lines (the dialogue)
            instance_id = (row.get("instance_id") or "").strip()
            try:
                accept = parse_decision(row.get("decision") or "")
            except ValueError as exc:
                raise DataError(path, line, "decision", str(exc)) from None
            if accept is None:
                continue
            if instance_id not in known:
                raise DataError(path, line, "instance_id", f"no MCCP instance {instance_id!r}")
            who = (row.get("reviewer") or "").strip() or reviewer
            if not who:
                raise DataError(path, line, "reviewer", "empty; fill it or pass --reviewer")
            pending.append((instance_id, who, accept, (row.get("note") or "").strip()))
    for instance_id, who, accept, note in pending:
        record_decision(store, instance_id, who, accept, note)
    return summarize_validation(store)
