"""The bundled synthetic demo corpus and the script logic that generates it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

CORPUS_FILE = "consultations.jsonl"
TRUTH_FILE = "truth.json"


def bundled_corpus_dir() -> Path:
    """Where the committed demo corpus lives inside the installed package."""
    return Path(str(resources.files("medrealmm.demo") / "data"))
