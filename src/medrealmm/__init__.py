"""medrealmm: build and run MedRealMM-style multimodal medical consultation benchmarks.

The top-level API, for scripts and notebooks (the ``medrealmm`` command covers the rest)::

    from medrealmm import RunStore, build_client, resolve_spec, run_mccp

- data: ``Consultation``, ``Event``, ``ImageRef``, ``Instance``, ``Criterion``, ``Rubric``,
  ``Response``, ``Verdict``, ``CaseScore``; ``iter_jsonl``/``write_jsonl`` read and write them,
  ``DataError`` names the file, line and field of bad input.
- runs: ``RunStore``, one resumable SQLite store per run folder.
- models: ``LLMClient`` (the one agent interface), ``ModelSpec``, ``load_model_specs``,
  ``resolve_spec`` and ``build_client`` (``"offline"`` is the rule-based baseline).
- phases: ``build_corpus``/``CorpusConfig`` (1), ``run_mccp`` (2), ``run_evaluation``/
  ``EvalSettings`` (4), ``write_report``.

Names load on first use, so ``import medrealmm.schema`` does not pull in every phase.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from medrealmm._version import __version__

if TYPE_CHECKING:
    from medrealmm.corpus import CorpusConfig, build_corpus
    from medrealmm.evaluate import EvalSettings, run_evaluation
    from medrealmm.io import DataError, iter_jsonl, write_jsonl
    from medrealmm.llm import LLMClient, ModelSpec, build_client, load_model_specs, resolve_spec
    from medrealmm.mccp import run_mccp
    from medrealmm.report import write_report
    from medrealmm.schema import (
        CaseScore,
        Consultation,
        Criterion,
        Event,
        ImageRef,
        Instance,
        Response,
        Rubric,
        Verdict,
    )
    from medrealmm.store import RunStore

_SOURCES = {
    "medrealmm.schema": (
        "CaseScore",
        "Consultation",
        "Criterion",
        "Event",
        "ImageRef",
        "Instance",
        "Response",
        "Rubric",
        "Verdict",
    ),
    "medrealmm.io": ("DataError", "iter_jsonl", "write_jsonl"),
    "medrealmm.store": ("RunStore",),
    "medrealmm.llm": ("LLMClient", "ModelSpec", "build_client", "load_model_specs", "resolve_spec"),
    "medrealmm.corpus": ("CorpusConfig", "build_corpus"),
    "medrealmm.mccp": ("run_mccp",),
    "medrealmm.evaluate": ("EvalSettings", "run_evaluation"),
    "medrealmm.report": ("write_report",),
}
_MODULE_OF = {name: module for module, names in _SOURCES.items() for name in names}

__all__ = [
    "CaseScore",
    "Consultation",
    "CorpusConfig",
    "Criterion",
    "DataError",
    "EvalSettings",
    "Event",
    "ImageRef",
    "Instance",
    "LLMClient",
    "ModelSpec",
    "Response",
    "Rubric",
    "RunStore",
    "Verdict",
    "__version__",
    "build_client",
    "build_corpus",
    "iter_jsonl",
    "load_model_specs",
    "resolve_spec",
    "run_evaluation",
    "run_mccp",
    "write_jsonl",
    "write_report",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'medrealmm' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
