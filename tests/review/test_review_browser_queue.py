"""A reviewer works through ten de-identification tasks in a real browser: log in, start the
queue, and for each task approve (A) then save-and-next (N), keyboard only; on the first, a
missed phone number is selected and added and a box drawn on an image, and both are applied
in the final (masked) corpus."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from medrealmm.corpus import ReviewConfig
from medrealmm.corpus import review as review_queue
from medrealmm.demo import bundled_corpus_dir
from medrealmm.review import create_app
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages
from medrealmm.testing.asgi import serve_in_thread
from medrealmm.testing.browser import CHROMIUM, CHROMIUM_ARGS

from .conftest import PASSWORD
from .test_review_queue import seed_queue

pytestmark = pytest.mark.browser

TASKS = 10
MISSED = "18285029457"  # the invented phone number in turn 6 of demo-000
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


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[str, RunStore, Path]]:
    with RunStore(tmp_path / "run") as store:
        seed_queue(store, cases=TASKS // 2)  # two passes per case
        root = tmp_path / "deid-images"  # as a de-identification run writes them
        shutil.copytree(bundled_corpus_dir() / "images", root / "images")
        store.set_meta(stages.image_root_key(stages.CORPUS_DEID), str(root))
        with serve_in_thread(create_app(store)) as base_url:
            yield base_url, store, root


def finish_audits(store: RunStore) -> None:
    """The second annotator approves whatever the audit drew (outside the browser)."""
    review_queue.advance(store, ReviewConfig())
    for task in review_queue.pending(store):
        decision = review_queue.ReviewDecision(
            task_key=task.key, reviewer="rev2", verdict=review_queue.ReviewVerdict.APPROVE
        )
        review_queue.record(store, decision)
    review_queue.advance(store, ReviewConfig())


def test_ten_tasks_by_keyboard_with_a_missed_span_and_an_image_box(
    served: tuple[str, RunStore, Path],
) -> None:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (CI installs it)")
    from playwright.sync_api import expect, sync_playwright

    base, store, root = served
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
                page.wait_for_load_state()  # the page's scripts have run
                if done == 0:  # demo-000, residual-PII pass
                    page.evaluate(SELECT, [6, MISSED])
                    expect(page.locator("#span-selected")).to_contain_text(MISSED)
                    page.select_option("#span-type", "PHONE")
                    page.click("#span-add")
                    expect(page.locator("#span-list li")).to_have_count(1)
                    page.check("#box-mode")
                    image = page.locator('.shot[data-event="4"][data-image="0"]')
                    image.scroll_into_view_if_needed()
                    expect(image.locator("img")).to_have_js_property("complete", True)
                    shot = image.bounding_box()
                    assert shot is not None and shot["height"] > 20
                    page.mouse.move(shot["x"] + shot["width"] * 0.2, shot["y"] + 5)
                    page.mouse.down()
                    page.mouse.move(shot["x"] + shot["width"] * 0.8, shot["y"] + shot["height"] - 5)
                    page.mouse.up()
                    expect(page.locator("#box-list li")).to_have_count(1)
                    page.locator("body").focus()
                    page.evaluate("document.activeElement.blur()")
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
    first = decided["demo-000|pii|primary"]
    assert [s.type.value for s in first.added_spans] == ["PHONE"]
    assert [(b.event, b.image) for b in first.added_boxes] == [(4, 0)]

    finish_audits(store)
    final = store.get(stages.CORPUS_FINAL, "demo-000", Consultation)
    assert final is not None
    assert MISSED not in final.events[6].content and "[PHONE]" in final.events[6].content
    painted_ref = final.events[4].images[0]
    assert painted_ref.path.startswith("reviewed/")
    with Image.open(root / painted_ref.path) as painted:
        w, h = painted.size
        assert painted.convert("RGB").getpixel((w // 2, h // 2)) == (0, 0, 0)
