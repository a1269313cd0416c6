"""Command line: ``medrealmm --help``."""

from __future__ import annotations

from medrealmm.cli import (
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
from medrealmm.cli.common import print_error
from medrealmm.io.diskfull import disk_full_message, is_disk_full


def main() -> None:
    """The console script: the app, with a full disk told in one line (any command)."""
    try:
        app()
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        print_error(disk_full_message(exc))
        raise SystemExit(2) from None


__all__ = ["app", "main"]
