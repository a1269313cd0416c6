"""Regenerate the bundled synthetic demo corpus byte for byte (needs the dev extras)."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from medrealmm.demo import bundled_corpus_dir
from medrealmm.testing.demo_corpus.generate import DEFAULT_SEED, generate_demo_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=bundled_corpus_dir())
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    path = generate_demo_corpus(args.out, seed=args.seed)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
