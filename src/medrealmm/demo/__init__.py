"""The bundled synthetic demo corpus, shipped so `medrealmm demo` runs after install.

Its generator lives in `medrealmm.testing.demo_corpus` (`scripts/make_demo_corpus.py`).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

CORPUS_FILE = "consultations.jsonl"
TRUTH_FILE = "truth.json"
#: the consultations the demo's release version 0.2 adds, a corpus folder of their own
NEXT_DIR = "next"
#: simulated physician labels of the demo's replies (``scripts/make_demo_panel.py``)
PANEL_FILE = "panel_labels.jsonl"


def bundled_corpus_dir() -> Path:
    """Where the committed demo corpus lives inside the installed package."""
    return Path(str(resources.files("medrealmm.demo") / "data"))


def bundled_next_cases() -> Path:
    """The folder of the cases version 0.2 of the demo release adds (same layout)."""
    return bundled_corpus_dir() / NEXT_DIR


def bundled_panel_labels() -> Path:
    """The demo's simulated physician panel: labels of its offline replies, made by
    ``medrealmm.testing.simulated_panel`` from a demo run (never real physicians)."""
    return bundled_corpus_dir() / PANEL_FILE
