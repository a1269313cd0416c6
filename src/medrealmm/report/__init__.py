"""The benchmark report: tables (CSV/JSON), figures (PNG) and one self-contained HTML page."""

from medrealmm.report.build import REPORT_FILE, ReportResult, write_report
from medrealmm.report.tables import Table, build_tables

__all__ = ["REPORT_FILE", "ReportResult", "Table", "build_tables", "write_report"]
