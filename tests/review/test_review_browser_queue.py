"""A reviewer works through ten de-identification tasks in a real browser with the keyboard
only: log in, start the queue, and for each task approve (A) then save-and-next (N)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from medrealmm.corpus import review as review_queue
from medrealmm.review import create_app
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages
from medrealmm.testing.asgi import serve_in_thread
from medrealmm.testing.browser import CHROMIUM, CHROMIUM_ARGS

from .conftest import PASSWORD
from .test_review_queue import seed_queue

pytestmark = pytest.mark.browser

TASKS = 10


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[str, RunStore]]:
    with RunStore(tmp_path / "run") as store:
        seed_queue(store, cases=TASKS // 2)  # two passes per case
        with serve_in_thread(create_app(store)) as base_url:
            yield base_url, store


def test_ten_tasks_with_save_and_next_by_keyboard_only(served: tuple[str, RunStore]) -> None:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (CI installs it)")
    from playwright.sync_api import expect, sync_playwright

    base, store = served
    assert len(review_queue.tasks(store)) == TASKS
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{base}/deid")
            keys = page.keyboard
            keys.type("rev1")  # the user name field has the focus
            keys.press("Tab")
            keys.type(PASSWORD)
            keys.press("Enter")
            expect(page.locator("h1")).to_have_text("脱敏核查")
            expect(page.locator(".progress strong")).to_have_text(str(TASKS))
            page.wait_for_load_state()
            keys.press("n")  # start with the first open task
            for done in range(TASKS):
                expect(page.locator(".progress strong")).to_have_text(str(TASKS - done))
                expect(page.locator("h1")).to_contain_text("轮 ·")  # a readable title
                page.wait_for_load_state()  # the shortcuts script has run
                keys.press("a")
                expect(page.locator('input[value="approve"]')).to_be_checked()
                keys.press("n")
                expect(page.locator(".notice")).to_have_text("已保存。")
            expect(page.locator("h1")).to_have_text("脱敏核查")  # nothing left: the queue
            expect(page.locator(".progress strong")).to_have_text("0")
        finally:
            browser.close()
    decided = review_queue.decisions(store)
    assert len(decided) == TASKS
    assert {d.reviewer for d in decided.values()} == {"rev1"}


SELECT = """([event, text]) => {
  const content = document.querySelector(`p.content[data-event="${event}"]`);
  const node = [...content.childNodes].find((n) => n.textContent.includes(text));
  const at = node.textContent.indexOf(text);
  const range = document.createRange();
  range.setStart(node.firstChild ?? node, at);
  range.setEnd(node.firstChild ?? node, at + text.length);
  document.getSelection().removeAllRanges();
  document.getSelection().addRange(range);
}"""


def test_a_selected_missed_span_is_added_and_masked(served: tuple[str, RunStore]) -> None:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (CI installs it)")
    from playwright.sync_api import expect, sync_playwright

    base, store = served
    case = store.get(stages.CORPUS_DEID, "demo-000", Consultation)
    assert case is not None
    missed = "18285029457"  # the invented phone number of turn 6
    assert missed in case.events[6].content
    key = "demo-000|pii|primary"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{base}/login?next=/deid/{quote(key, safe='')}")
            page.fill('input[name="username"]', "rev1")
            page.fill('input[name="password"]', PASSWORD)
            page.keyboard.press("Enter")
            expect(page.locator("#span-add")).to_be_disabled()
            page.wait_for_load_state()
            page.evaluate(SELECT, [6, missed])
            expect(page.locator("#span-selected")).to_contain_text(missed)
            page.select_option("#span-type", "PHONE")
            page.click("#span-add")
            expect(page.locator("#span-list li")).to_have_count(1)
            page.keyboard.press("a")
            page.keyboard.press("n")
            expect(page.locator(".notice")).to_have_text("已保存。")
        finally:
            browser.close()
    added = review_queue.decisions(store)[key].added_spans
    start = case.events[6].content.index(missed)
    assert [(s.event, s.start, s.end, s.type.value) for s in added] == [
        (6, start, start + len(missed), "PHONE")
    ]
    masked = review_queue.apply_added_spans(case, added)
    assert missed not in masked.events[6].content and "[PHONE]" in masked.events[6].content
