"""Errors that point a user at the exact place in a file that is wrong."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError


class DataError(ValueError):
    """A malformed record: names the file, the 1-based line and the field."""

    def __init__(self, path: Path | str, line: int, field: str, message: str) -> None:
        self.path = Path(path)
        self.line = line
        self.field = field
        self.message = message
        super().__init__(f"{self.path}:{line}: field '{field}': {message}")

    @classmethod
    def from_validation(cls, path: Path | str, line: int, error: ValidationError) -> DataError:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "<record>"
        extra = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        return cls(path, line, field, f"{first['msg']}{extra}")


def duplicate_id(path: Path | str, line: int, record_id: str, first_line: int) -> DataError:
    """The one wording for a repeated consultation id, whichever command reads the file."""
    return DataError(path, line, "id", f"duplicate id {record_id!r} (first on line {first_line})")
