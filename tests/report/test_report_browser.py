from __future__ import annotations

from pathlib import Path

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
    assert len(widths) == 9 and all(w > 0 for w in widths)  # Fig 3 distributions: 9
    assert all(url.startswith(("file:", "data:")) for url in requests)


#: Only matplotlib's own DejaVu (Latin, no CJK): a bare machine. With no font at all Chromium
#: loads no web font either.
FONTCONFIG_LATIN_ONLY = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir>{latin}</dir><cachedir>{cache}</cachedir></fontconfig>
"""

#: Two characters of the page's title, each shown alone: distinct glyphs, unless both are boxes.
GLYPH_PROBE = """([a, b]) => [a, b].map((ch, i) => {
  const span = document.createElement('span');
  span.id = 'probe-' + i; span.textContent = ch; span.style.fontSize = '48px';
  document.body.prepend(span); return span.id; })"""


@pytest.mark.browser
def test_report_text_renders_with_no_system_font(built_report: ReportResult, tmp_path) -> None:
    """Chromium with fontconfig pointed at no CJK font (the system's hidden): the page's
    embedded subset draws its Chinese; with the embedded font removed, the same characters
    are boxes."""
    import io
    import os

    import matplotlib
    import numpy as np
    from PIL import Image

    playwright = pytest.importorskip("playwright.sync_api")
    conf = tmp_path / "fonts.conf"
    latin = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    conf.write_text(
        FONTCONFIG_LATIN_ONLY.format(latin=latin, cache=tmp_path / "cache"), encoding="utf-8"
    )
    env = {**os.environ, "FONTCONFIG_FILE": str(conf)}

    def glyphs(page) -> list[np.ndarray]:
        ids = page.evaluate(GLYPH_PROBE, ["评", "测"])
        shots = [page.locator(f"#{i}").screenshot() for i in ids]
        return [np.asarray(Image.open(io.BytesIO(s)).convert("L")) for s in shots]

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, env=env)
        try:
            page = browser.new_page()
            page.goto(built_report.html.as_uri())
            loaded = "document.fonts.load('48px \"MedRealMM CJK\"', '评测').then(f => f.length)"
            assert page.evaluate(loaded) == 1
            embedded = glyphs(page)
            page.screenshot(path=str(tmp_path / "report-no-system-fonts.png"))
            page.evaluate("document.styleSheets[0].deleteRule(0)")  # the @font-face rule
            page.evaluate("document.querySelectorAll('[id^=probe-]').forEach(e => e.remove())")
            boxes = glyphs(page)
        finally:
            browser.close()
    assert embedded[0].shape != embedded[1].shape or not np.array_equal(*embedded)
    assert embedded[0].min() < 128  # ink, not an empty span
    # the control: without the embedded font nothing draws these characters
    assert boxes[0].shape == boxes[1].shape and np.array_equal(*boxes)
