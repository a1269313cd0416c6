"""The bundled synthetic demo corpus, shipped so `medrealmm demo` runs after install.

Its generator lives in `medrealmm.testing.demo_corpus` (`scripts/make_demo_corpus.py`).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

CORPUS_FILE = "consultations.jsonl"
TRUTH_FILE = "truth.json"


def bundled_corpus_dir() -> Path:
    """Where the committed demo corpus lives inside the installed package."""
    return Path(str(resources.files("medrealmm.demo") / "data"))
