"""A physician takes a demo case from rubric round 0 to approval in a real browser, and the
Refiner consumes the feedback given there (headless Debian Chromium, uvicorn on loopback)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("medrealmm.rubric", reason="medrealmm.rubric lands separately")

from medrealmm.llm import OFFLINE_NAME, build_client, resolve_spec
from medrealmm.review import create_app
from medrealmm.rubric import (
    FeedbackType,
    RubricSettings,
    final_rubric,
    latest_round,
    load_feedback,
    round_history,
)
from medrealmm.rubric.stage import generate_all
from medrealmm.store import RunStore, stages
from medrealmm.testing.asgi import serve_in_thread
from medrealmm.testing.browser import CHROMIUM, CHROMIUM_ARGS

from .conftest import CASE_ID, PASSWORD, seed

pytestmark = pytest.mark.browser

INSTANCE_ID = f"{CASE_ID}-t4"


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The app over a store whose round 0 comes from the offline Generator baseline."""
    run = tmp_path / "run"
    with RunStore(run) as store:
        seed(store)
        store.delete(stages.RUBRIC_ROUND)
        client = build_client(resolve_spec(OFFLINE_NAME), cache=store.cache)
        asyncio.run(generate_all(store, client, RubricSettings()))
    store = RunStore(run)
    try:
        with serve_in_thread(create_app(store)) as base_url:
            yield base_url, run
    finally:
        store.close()


def test_physician_refines_and_approves_a_rubric_in_the_browser(
    served: tuple[str, Path],
) -> None:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (CI installs it)")
    from playwright.sync_api import expect, sync_playwright

    base, run = served
    with RunStore(run) as store:
        round0 = latest_round(store, INSTANCE_ID)
    assert round0 is not None and round0.round == 0
    target = next(c for c in round0.criteria if c.kind.value == "llm" and c.weight >= 2)
    first, second = target.weight - 1, 1
    rule = next(c for c in round0.criteria if c.kind.value == "rule")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{base}/rubric/{INSTANCE_ID}")
            expect(page).to_have_url(f"{base}/login?next=%2Frubric%2F{INSTANCE_ID}")
            page.fill('input[name="username"]', "doc1")
            page.fill('input[name="password"]', PASSWORD)
            page.click('form button[type="submit"]')
            expect(page.locator("h1")).to_contain_text("第 0 轮")

            # a rule-based criterion (the length limit) can only be reweighted or removed
            rule_options = page.locator(f'select[name="action:{rule.id}"] option')
            expect(rule_options).to_have_count(2)

            row = page.locator(f'tr[data-criterion="{target.id}"]')
            row.locator(f'select[name="action:{target.id}"]').select_option("split")
            row.locator("summary").click()
            row.locator(f'input[name="part:{target.id}:1:text"]').fill("对图片所见作出具体描述")
            row.locator(f'input[name="part:{target.id}:1:weight"]').fill(str(first))
            row.locator(f'input[name="part:{target.id}:2:text"]').fill("说明图片所见与诊断的关系")
            row.locator(f'input[name="part:{target.id}:2:weight"]').fill(str(second))
            page.click('#feedback button[value="stay"]')

            # the Refiner runs in the background; the page refreshes itself until round 1
            expect(page.locator("h1")).to_contain_text("第 1 轮", timeout=20_000)
            expect(page.locator("p.state")).to_have_attribute("data-state", "awaiting_review")
            # keyboard only: E to the note and Esc out of it, A ticks the confirmation and
            # focuses "approve and next", Enter approves and opens what is left
            page.keyboard.press("e")
            expect(page.locator("#note")).to_be_focused()
            expect(page.locator("#note")).to_have_value("")
            page.keyboard.press("Escape")
            page.keyboard.press("a")
            expect(page.locator("#approve-confirm")).to_be_checked()
            expect(page.locator("#approve-next")).to_be_focused()
            page.keyboard.press("Enter")
            # the next rubric awaiting review, or the rubric queue when none is left
            after = re.compile(
                rf"{re.escape(base)}/rubric(/(?!{INSTANCE_ID})[^?]+)?\?notice=saved$"
            )
            expect(page).to_have_url(after, timeout=10_000)
            page.goto(f"{base}/rubric/{INSTANCE_ID}")
            expect(page.locator("p.state")).to_have_attribute("data-state", "approved")
        finally:
            browser.close()

    with RunStore(run) as store:
        feedback = load_feedback(store, INSTANCE_ID, 0)
        assert feedback is not None and feedback.reviewer == "doc1"
        assert [i.type for i in feedback.items] == [FeedbackType.SPLIT_CRITERION]
        assert [(p.text, p.weight) for p in feedback.items[0].parts] == [
            ("对图片所见作出具体描述", first),
            ("说明图片所见与诊断的关系", second),
        ]
        rounds = round_history(store, INSTANCE_ID)
        assert [r.round for r in rounds] == [0, 1]
        texts = {c.text: c.weight for c in rounds[1].criteria}
        assert texts.get("对图片所见作出具体描述") == first
        assert texts.get("说明图片所见与诊断的关系") == second
        assert target.id not in {c.id for c in rounds[1].criteria}
        final = final_rubric(store, INSTANCE_ID)
        assert final is not None and final.approved and final.round == 1
        assert load_feedback(store, INSTANCE_ID, 1).approves  # type: ignore[union-attr]
