"""What the near-misses of the residual-PII pass would catch: identifiers recall missed that a
highlight points at, and how many highlights a reviewer reads to find them.

Each text goes through the rules and the NER model (``text.screen_spans_in``, the stage's text
pass before the LLM pass) and ``near_miss.near_misses``. A gold identifier is missed when no
character of it is masked; it is highlighted when a near-miss overlaps it. Prints, per set, the
missed identifiers, those highlighted (by near-miss reason), the near-misses per 100 texts and
the share of near-misses that lie on an identifier, with the machine's load. Outside sets are
read in place; nothing of them is written anywhere.

    PYTHONPATH=src python benchmarks/deid_near_miss.py --weibo DIR [--weibo-split test]
                                                       [--outside ../shared/deid-outside]
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from deid_eval import load_weibo
from deid_outside import load_outside

from medrealmm.deid.near_miss import near_misses
from medrealmm.deid.text import screen_spans_in

Gold = list[tuple[int, int]]


def report(name: str, texts: Sequence[str], gold: Sequence[Gold]) -> None:
    started = time.process_time()
    screened = screen_spans_in(texts)
    missed = highlighted = shown = on_gold = 0
    by_reason: Counter[str] = Counter()
    for text, truth, (kept, dropped) in zip(texts, gold, screened, strict=True):
        suspects = near_misses(text, kept, dropped)
        shown += len(suspects)
        on_gold += sum(any(s.start < b and a < s.end for a, b in truth) for s in suspects)
        for a, b in truth:
            if any(span.start < b and a < span.end for span in kept):
                continue
            missed += 1
            hits = [s for s in suspects if s.start < b and a < s.end]
            if hits:
                highlighted += 1
                by_reason[hits[0].reason or hits[0].kind] += 1
    seconds = time.process_time() - started
    print(f"\n== {name}: {len(texts)} texts, {sum(map(len, gold))} identifiers")
    print(f"  missed by the masks (no character masked): {missed}")
    print(f"  of those highlighted as near-misses: {highlighted} {dict(by_reason)}")
    share = on_gold / shown if shown else 0.0
    print(
        f"  near-misses: {shown} ({100 * shown / max(1, len(texts)):.1f} per 100 texts), "
        f"{on_gold} on an identifier ({share:.3f})"
    )
    print(f"  {seconds:.1f} CPU-s; load {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weibo", type=Path, help="golden-horse data folder (Weibo NER)")
    parser.add_argument("--weibo-split", choices=["train", "dev", "test"], default="test")
    parser.add_argument("--outside", type=Path, help="folder of an outside set's text.jsonl")
    args = parser.parse_args()
    if args.weibo is None and args.outside is None:
        parser.error("pass --weibo DIR, --outside DIR or both")
    print(f"load before: {os.getloadavg()[0]:.2f}")
    if args.weibo is not None:
        posts = load_weibo(args.weibo, args.weibo_split)
        names = [[(a, b) for a, b, label in p.entities if label == "PER.NAM"] for p in posts]
        report(f"Weibo NER {args.weibo_split} (person names)", [p.text for p in posts], names)
    if args.outside is not None:
        turns = [u for dialog in load_outside(args.outside).values() for u in dialog]
        gold = [[(a, b) for a, b, _ in u.spans] for u in turns]
        report(f"outside set {args.outside.name}", [u.text for u in turns], gold)


if __name__ == "__main__":
    main()
