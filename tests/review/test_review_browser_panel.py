"""Panel grading in a real browser: log in, give a verdict per criterion, see it stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from medrealmm.review import create_app
from medrealmm.schema import Verdict
from medrealmm.store import RunStore, stages
from medrealmm.testing.asgi import serve_in_thread
from medrealmm.testing.browser import CHROMIUM, CHROMIUM_ARGS

from .conftest import PASSWORD, RESPONSE_KEY, seed

pytestmark = pytest.mark.browser


@pytest.fixture()
def base_url(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    run = tmp_path / "run"
    with RunStore(run) as store:
        seed(store)
    store = RunStore(run)
    try:
        with serve_in_thread(create_app(store)) as base_url:
            yield base_url, run
    finally:
        store.close()


def test_physician_grades_a_response_in_the_browser(base_url: tuple[str, Path]) -> None:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (CI installs it)")
    from playwright.sync_api import expect, sync_playwright

    base, run = base_url
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{base}/panel")
            page.fill('input[name="username"]', "doc1")
            page.fill('input[name="password"]', PASSWORD)
            page.click('form button[type="submit"]')
            expect(page).to_have_url(f"{base}/panel")
            page.click("table a")  # the one response in the queue
            expect(page).to_have_url(f"{base}/panel/{quote(RESPONSE_KEY)}")
            page.check('input[name="verdict:c1"][value="yes"]')
            page.fill('input[name="rationale:c1"]', "明确提出足癣")
            page.check('input[name="verdict:c3"][value="no"]')
            page.click('form button[type="submit"]:has-text("保存判定")')
            expect(page.locator("p.notice")).to_contain_text("已保存")
            expect(page.locator('input[name="verdict:c1"][value="yes"]')).to_be_checked()
        finally:
            browser.close()

    with RunStore(run) as store:
        c1 = store.get(stages.PANEL_VERDICT, f"doc1|{RESPONSE_KEY}|c1", Verdict)
        c3 = store.get(stages.PANEL_VERDICT, f"doc1|{RESPONSE_KEY}|c3", Verdict)
        assert c1 is not None and c1.value is True and c1.rationale == "明确提出足癣"
        assert c3 is not None and c3.value is False
        assert store.get(stages.PANEL_VERDICT, f"doc1|{RESPONSE_KEY}|c2", Verdict) is None
