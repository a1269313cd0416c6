from __future__ import annotations

import pytest

from medrealmm.report import ReportResult
from medrealmm.testing.browser import CHROMIUM, CHROMIUM_ARGS


@pytest.mark.browser
def test_report_opens_in_headless_chromium(built_report: ReportResult) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    errors: list[str] = []
    requests: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(built_report.html.as_uri())
            widths = page.evaluate(
                "Array.from(document.images).map(i => i.complete ? i.naturalWidth : 0)"
            )
            title = page.title()
        finally:
            browser.close()
    assert errors == []
    assert title == "MedRealMM 评测报告"
    assert len(widths) == 8 and all(w > 0 for w in widths)
    assert all(url.startswith(("file:", "data:")) for url in requests)
