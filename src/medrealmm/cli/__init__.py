"""Command line: ``medrealmm --help``."""

from __future__ import annotations

from medrealmm.cli import (
    compare,  # noqa: F401
    core,  # noqa: F401  (registers commands)
    corpus,  # noqa: F401
    deid,  # noqa: F401
    evaluate,  # noqa: F401
    mccp,  # noqa: F401
    meta,  # noqa: F401
    models,  # noqa: F401
    pipeline,  # noqa: F401
    release,  # noqa: F401
    report,  # noqa: F401
    review,  # noqa: F401
    rubric,  # noqa: F401
)
from medrealmm.cli.app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
