"""Screenshots of the review app for docs/images: the de-identification queue and a task page
at desktop (1280 px) and tablet (820 px) width, over the bundled demo corpus.

    python scripts/review_screenshots.py docs/images
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

from PIL import Image

from medrealmm.corpus import ReviewConfig
from medrealmm.corpus import review as review_queue
from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.io import iter_jsonl
from medrealmm.review import Role, create_app, create_user
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages
from medrealmm.testing.asgi import serve_in_thread
from medrealmm.testing.browser import CHROMIUM, CHROMIUM_ARGS

PASSWORD = "screenshot password"
WIDTHS = {"desktop": 1280, "tablet": 820}
CASES = 12


# What de-identification masks in the case shown (the demo's invented name and phone), so the
# screenshot looks like a task a reviewer gets.
MASKS = {"朱秀英": "[NAME]", "18285029457": "[PHONE]"}


def masked(consultation: Consultation) -> Consultation:
    events = []
    for event in consultation.events:
        content = event.content
        for value, placeholder in MASKS.items():
            content = content.replace(value, placeholder)
        events.append(event.model_copy(update={"content": content}))
    return consultation.model_copy(update={"events": events})


def seed(store: RunStore) -> None:
    found = list(iter_jsonl(bundled_corpus_dir() / CORPUS_FILE, Consultation))[:CASES]
    for consultation in found:
        store.put(stages.CORPUS_DEID, consultation.id, masked(consultation))
    store.set_meta(stages.image_root_key(stages.CORPUS_DEID), str(bundled_corpus_dir()))
    review_queue.enqueue(store, ReviewConfig(), stages.CORPUS_DEID)
    create_user(store.connection(), "reviewer", PASSWORD, frozenset({Role.REVIEWER}))


def shrink(path: Path) -> None:
    """A 256-colour palette: the pages are flat colours and text, a fraction of the bytes."""
    with Image.open(path) as image:
        image.convert("RGB").quantize(colors=256).save(path, optimize=True)


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, RunStore(Path(tmp) / "run") as store:
        seed(store)
        task = quote("demo-000|pii|primary", safe="")
        with serve_in_thread(create_app(store)) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(f"{base}/login")
            page.fill('input[name="username"]', "reviewer")
            page.fill('input[name="password"]', PASSWORD)
            page.keyboard.press("Enter")
            page.wait_for_url(f"{base}/")
            for name, width in WIDTHS.items():
                page.set_viewport_size({"width": width, "height": 900})
                for screen, url in (("queue", "/deid"), ("task", f"/deid/{task}")):
                    page.goto(base + url)
                    page.wait_for_load_state("networkidle")
                    page.evaluate("document.fonts.ready")
                    path = out / f"review-{screen}-{width}.png"
                    page.screenshot(path=str(path))
                    shrink(path)
                    print(f"{path} ({name})")
            browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images"))
