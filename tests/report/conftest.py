from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from medrealmm.report import ReportResult, write_report
from medrealmm.store import RunStore
from medrealmm.testing.synthetic_store import build_synthetic_store


@pytest.fixture(scope="session")
def synthetic_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_synthetic_store(tmp_path_factory.mktemp("run"), cases=16)


@pytest.fixture(scope="session")
def report_and_warnings(
    synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[ReportResult, list[str]]:
    """One report for the whole session (figures take seconds), with the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught, RunStore(synthetic_store) as store:
        warnings.simplefilter("always")
        result = write_report(store, tmp_path_factory.mktemp("report"), resamples=500)
    return result, [str(w.message) for w in caught]


@pytest.fixture(scope="session")
def built_report(report_and_warnings: tuple[ReportResult, list[str]]) -> ReportResult:
    return report_and_warnings[0]
