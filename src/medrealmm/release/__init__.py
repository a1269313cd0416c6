"""Versioned release: DUA gate, patient withdrawal changelog, deterministic export (paper 9)."""

from medrealmm.release.build import BuildResult, build_release, write_release
from medrealmm.release.dua import (
    DUA_FILE_ENV,
    Acceptance,
    DUANotAccepted,
    acceptance_file,
    record_acceptance,
)
from medrealmm.release.layout import ReleaseInfo
from medrealmm.release.loader import (
    Release,
    ReleaseIntegrityError,
    load_release,
    verify_release,
)
from medrealmm.release.sources import UnmaskedDataError, UnreviewedReleaseError
from medrealmm.release.withdrawals import (
    WITHDRAWN,
    Withdrawal,
    all_withdrawals,
    default_register,
    record_withdrawal,
)

__all__ = [
    "DUA_FILE_ENV",
    "WITHDRAWN",
    "Acceptance",
    "BuildResult",
    "DUANotAccepted",
    "Release",
    "ReleaseInfo",
    "ReleaseIntegrityError",
    "UnmaskedDataError",
    "UnreviewedReleaseError",
    "Withdrawal",
    "acceptance_file",
    "all_withdrawals",
    "build_release",
    "default_register",
    "load_release",
    "record_acceptance",
    "record_withdrawal",
    "verify_release",
    "write_release",
]
