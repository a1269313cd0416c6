"""What the review list of suspects costs and what it catches (``near_miss.find_suspects``).

Every consultation goes through ``deid_turns`` (rules and the NER model, no LLM pass, as the
deid stage runs without a client), then each turn's suspects are listed as the stage stores
them. Printed, with the machine's load:

* on the bundled demo corpus, where every identifier is masked, suspects are pure cost:
  suspects per consultation (a review task), by reason;
* on an outside set (``--outside DIR``, repeatable; read in place, nothing of it written), after
  masking: suspects per consultation, their precision (a suspect is right when it overlaps a
  gold identifier), and the share of the identifiers still unmasked (< 90% of their characters
  masked, the sets' own rule for "found") that some suspect overlaps.

    PYTHONPATH=src python benchmarks/deid_suspects.py [--outside DIR ...] [--show N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from deid_outside import load_outside

from medrealmm.deid.consultation import deid_turns
from medrealmm.deid.near_miss import near_misses
from medrealmm.deid.record import Suspect
from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir, bundled_next_cases

FOUND = 0.9  # the outside sets' rule: an identifier is found when 90% of it is masked


def _run(texts: Sequence[str]) -> tuple[list[list[Suspect]], list[list[tuple[int, int]]]]:
    outcome = asyncio.run(deid_turns(list(texts)))
    found = [
        near_misses(text, spans, vetoed)
        for text, spans, vetoed in zip(texts, outcome.spans, outcome.vetoed, strict=True)
    ]
    return found, [[(s.start, s.end) for s in turn] for turn in outcome.spans]


def demo(show: int) -> None:
    started = time.process_time()
    cases = []
    for folder in (bundled_corpus_dir(), bundled_next_cases()):
        lines = (folder / CORPUS_FILE).read_text(encoding="utf-8").splitlines()
        cases += [json.loads(line) for line in lines if line.strip()]
    reasons: Counter[str] = Counter()
    total = 0
    examples: list[str] = []
    for case in cases:
        texts = [event["content"] for event in case["events"]]
        found, _ = _run(texts)
        for text, turn in zip(texts, found, strict=True):
            total += len(turn)
            reasons.update(s.reason or s.kind for s in turn)
            examples += [f"{s.reason}: {text[s.start : s.end]}" for s in turn]
    print(f"\n== demo corpus: {len(cases)} consultations (every identifier masked)")
    print(f"  suspects: {total}, {total / max(1, len(cases)):.2f} per consultation")
    print(f"  by reason: {dict(reasons.most_common())}")
    for line in examples[:show]:
        print(f"    {line}")
    print(f"  {time.process_time() - started:.1f} CPU-s; load {os.getloadavg()[0]:.2f}")


def outside(directory: Path, show: int) -> None:
    started = time.process_time()
    dialogs = load_outside(directory)
    shown = on_gold = missed = caught = 0
    reasons: Counter[str] = Counter()
    right: Counter[str] = Counter()
    left: list[str] = []
    for turns in dialogs.values():
        texts = [u.text for u in turns]
        found, masked = _run(texts)
        for utterance, suspects, spans in zip(turns, found, masked, strict=True):
            covered = {i for a, b in spans for i in range(a, b)}
            gold = utterance.extents or [(a, b) for a, b, _ in utterance.spans]
            shown += len(suspects)
            for s in suspects:
                hit = any(s.start < b and a < s.end for a, b in gold)
                on_gold += hit
                reasons[s.reason or s.kind] += 1
                right[s.reason or s.kind] += hit
            for a, b, kind in utterance.spans:
                if sum(i in covered for i in range(a, b)) >= FOUND * (b - a):
                    continue
                missed += 1
                if any(s.start < b and a < s.end for s in suspects):
                    caught += 1
                else:
                    left.append(f"{kind}: {utterance.text[a:b]}")
    n = len(dialogs)
    print(f"\n== outside set {directory.name}: {n} consultations")
    print(f"  suspects: {shown}, {shown / max(1, n):.2f} per consultation")
    print(f"  precision (on a gold identifier): {on_gold}/{shown} = {on_gold / max(1, shown):.2f}")
    share = caught / missed if missed else 1.0
    print(f"  identifiers still unmasked: {missed}; among suspects: {caught} ({share:.2f})")
    print(f"  by reason (right/shown): { {r: f'{right[r]}/{c}' for r, c in reasons.items()} }")
    for line in left[:show]:
        print(f"    not a suspect: {line}")
    print(f"  {time.process_time() - started:.1f} CPU-s; load {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--outside", type=Path, action="append", default=[], help="an outside set's folder"
    )
    parser.add_argument("--show", type=int, default=0, help="print N examples per set")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}")
    demo(args.show)
    for directory in args.outside:
        outside(directory, args.show)


if __name__ == "__main__":
    main()
