"""An outside de-identification set of consultations, read in place (``deid_eval.py --outside``).

The folder holds ``text.jsonl``: one utterance a line, with its consultation (``dialog``),
``turn``, ``text``, typed gold ``spans`` ([start, end, type]), their acceptable ``extents``
([start, end]) and hard ``negatives`` ([start, end, kind]: clinical terms and look-alikes). Each
consultation goes through ``deid_turns`` as the deid stage runs it, without and with the LLM
pass. Scored as the set's own scorer scores it: a gold span is found when at least 90% of its
characters are masked (any type); a masked span is correct when at least half of it lies
inside gold extents; a negative is kept when none of it is masked. Nothing of the set is
written anywhere.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from medrealmm.deid.consultation import deid_turns
from medrealmm.llm import build_client, resolve_spec

# The negatives' kinds that are clinical content; the others are look-alikes, clock times and
# relative dates.
CLINICAL_KINDS = frozenset({"AGE", "DUR", "DOSE", "LAB", "DRUG", "DISEASE", "BODY", "DEPT"})


@dataclass
class Utterance:
    dialog: str
    turn: int
    text: str
    spans: list[tuple[int, int, str]]
    extents: list[tuple[int, int]]
    negatives: list[tuple[int, int, str]]


def load_outside(directory: Path) -> dict[str, list[Utterance]]:
    """Consultations of ``directory/text.jsonl``, turns in order."""
    path = directory / "text.jsonl"
    if not path.is_file():
        raise SystemExit(f"{path}: not found (pass the folder of the outside set)")
    dialogs: dict[str, list[Utterance]] = defaultdict(list)
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            row = Utterance(
                raw["dialog"],
                int(raw["turn"]),
                raw["text"],
                [(int(a), int(b), str(t)) for a, b, t in raw["spans"]],
                [(int(a), int(b)) for a, b in raw.get("extents") or []],
                [(int(a), int(b), str(k)) for a, b, k in raw.get("negatives") or []],
            )
        except (ValueError, KeyError, TypeError) as error:
            problem = f"{type(error).__name__}: {error}"
            raise SystemExit(f"{path}:{number}: bad row ({problem})") from None
        dialogs[row.dialog].append(row)
    for turns in dialogs.values():
        turns.sort(key=lambda r: r.turn)
    return dialogs


@dataclass
class OutsideTally:
    found: Counter[str] = field(default_factory=Counter)
    total: Counter[str] = field(default_factory=Counter)
    predicted: int = 0
    correct: int = 0
    clinical: int = 0
    clinical_kept: int = 0
    lost: Counter[str] = field(default_factory=Counter)

    def add(self, row: Utterance, spans: list[tuple[int, int]]) -> None:
        masked = {i for a, b in spans for i in range(a, b)}
        for start, end, kind in row.spans:
            self.total[kind] += 1
            self.found[kind] += sum(i in masked for i in range(start, end)) >= 0.9 * (end - start)
        gold = {i for a, b in row.extents or [(a, b) for a, b, _ in row.spans] for i in range(a, b)}
        for a, b in spans:
            self.predicted += 1
            self.correct += sum(i in gold for i in range(a, b)) >= 0.5 * (b - a)
        for a, b, kind in row.negatives:
            if kind in CLINICAL_KINDS:
                self.clinical += 1
                kept = not any(i in masked for i in range(a, b))
                self.clinical_kept += kept
                self.lost[kind] += not kept

    def recall(self, kind: str | None = None) -> float:
        found = self.found[kind] if kind else sum(self.found.values())
        total = self.total[kind] if kind else sum(self.total.values())
        return found / total if total else float("nan")


def outside_eval(directory: Path, model: str) -> None:
    """Recall by type, precision and clinical terms kept on the outside set."""
    dialogs = load_outside(directory)
    client = build_client(resolve_spec(model))
    tallies = {"rules+NER": OutsideTally(), f"+LLM ({client.name})": OutsideTally()}
    for turns in dialogs.values():
        texts = [r.text for r in turns]
        for tally, llm in zip(tallies.values(), (None, client), strict=True):
            outcome = asyncio.run(deid_turns(texts, llm))
            for row, spans in zip(turns, outcome.spans, strict=True):
                tally.add(row, [(s.start, s.end) for s in spans])
    first = next(iter(tallies.values()))
    n = sum(first.total.values())
    print(
        f"\n== outside set {directory.name}: {sum(map(len, dialogs.values()))} utterances in "
        f"{len(dialogs)} consultations, {n} identifiers (a dev set: rules were tuned on it) =="
    )
    print(f"  {'type':<9} {'n':>4}  " + "  ".join(f"{k:>18}" for k in tallies) + "  target")
    for kind in sorted(first.total, key=lambda k: -first.total[k]):
        cells = "  ".join(f"{t.recall(kind):>18.3f}" for t in tallies.values())
        print(f"  {kind:<9} {first.total[kind]:>4}  {cells}  recall >= 0.95")
    print(
        f"  {'recall':<9} {n:>4}  "
        + "  ".join(f"{t.recall():>18.3f}" for t in tallies.values())
        + "  >= 0.98"
    )
    print(
        f"  {'precision':<9} {'':>4}  "
        + "  ".join(f"{t.correct / max(t.predicted, 1):>18.3f}" for t in tallies.values())
        + "  >= 0.92"
    )
    print(
        f"  {'clinical':<9} {'':>4}  "
        + "  ".join(f"{t.clinical_kept:>11}/{t.clinical:<6}" for t in tallies.values())
        + "  kept >= 0.995"
    )
    lost = sum((t.lost for t in tallies.values()), Counter())
    if lost:
        print("  clinical terms lost, by kind: " + ", ".join(f"{k} {v}" for k, v in lost.items()))
    print(f"  load average {os.getloadavg()[0]:.2f}")
