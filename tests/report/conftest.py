from __future__ import annotations

from pathlib import Path

import pytest

from medrealmm.report import ReportResult, write_report
from medrealmm.report.synthetic import build_synthetic_store
from medrealmm.store import RunStore


@pytest.fixture(scope="session")
def synthetic_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_synthetic_store(tmp_path_factory.mktemp("run"), cases=16)


@pytest.fixture(scope="session")
def built_report(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    with RunStore(synthetic_store) as store:
        return write_report(store, tmp_path_factory.mktemp("report"), resamples=500)
