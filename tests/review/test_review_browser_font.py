"""On a machine whose only fonts are Latin, the review pages still show Chinese glyphs: the
app serves its own CJK subset (headless Debian Chromium with a Latin-only fontconfig)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from medrealmm.fonts import find_cjk_font
from medrealmm.review import create_app, webfont
from medrealmm.store import RunStore
from medrealmm.testing.asgi import serve_in_thread
from medrealmm.testing.browser import CHROMIUM, CHROMIUM_ARGS

from .conftest import seed

pytestmark = pytest.mark.browser

LATIN_FONTS = Path("/usr/share/fonts/truetype/dejavu")
# Two characters of the login page: as glyphs they differ, as missing-glyph boxes they match.
PAIR = ("登", "录")
DRAW = """([font, chars]) => {
  const pixels = (ch) => {
    const canvas = document.createElement('canvas');
    canvas.width = 48; canvas.height = 48;
    const ctx = canvas.getContext('2d');
    ctx.font = font;
    ctx.fillText(ch, 4, 40);
    return Array.from(ctx.getImageData(0, 0, 48, 48).data).join(',');
  };
  return pixels(chars[0]) !== pixels(chars[1]);
}"""


# Where character ``ch`` of the element's text is painted.
BOX = """([selector, ch]) => {
  const node = [...document.querySelector(selector).childNodes].find(
    (n) => n.nodeType === Node.TEXT_NODE && n.textContent.includes(ch));
  const range = document.createRange();
  const at = node.textContent.indexOf(ch);
  range.setStart(node, at);
  range.setEnd(node, at + 1);
  const r = range.getBoundingClientRect();
  return { x: r.x, y: r.y, width: r.width, height: r.height };
}"""


def latin_only_fontconfig(folder: Path) -> Path:
    config = folder / "fonts.conf"
    config.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n'
        f"  <dir>{LATIN_FONTS}</dir>\n  <cachedir>{folder / 'cache'}</cachedir>\n"
        "</fontconfig>\n",
        encoding="utf-8",
    )
    return config


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[str]:
    with RunStore(tmp_path / "run") as store:
        seed(store)
        with serve_in_thread(create_app(store)) as base_url:
            yield base_url


def test_chinese_shows_as_glyphs_with_latin_only_system_fonts(served: str, tmp_path: Path) -> None:
    if not CHROMIUM.exists() or not LATIN_FONTS.is_dir():
        pytest.skip("Debian chromium and DejaVu fonts are needed (CI installs them)")
    if find_cjk_font() is None:
        pytest.skip("no CJK font to subset")
    from playwright.sync_api import sync_playwright

    env = {"FONTCONFIG_FILE": str(latin_only_fontconfig(tmp_path)), "HOME": str(tmp_path)}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, env=env
        )
        try:
            page = browser.new_page()
            page.goto(f"{served}/login")
            page.evaluate("document.fonts.ready")
            page.wait_for_function(
                f"document.fonts.check('16px \"{webfont.FAMILY}\"', '{PAIR[0]}')"
            )
            loaded = page.evaluate(
                "Array.from(document.fonts).filter(f => f.status === 'loaded')"
                ".map(f => f.family.replaceAll('\"', ''))"
            )
            assert webfont.FAMILY in loaded
            # the system alone draws both characters as the same box: the config is Latin-only
            assert not page.evaluate(DRAW, ["40px sans-serif", list(PAIR)])
            assert page.evaluate(DRAW, [f'40px "{webfont.FAMILY}"', list(PAIR)])
            # and the page itself shows them, bold headings included: as painted on screen,
            # the two characters of the h1 and of the brand differ (two boxes would not)
            page.wait_for_timeout(300)  # a swap repaint
            for selector, chars in (("h1", PAIR), ("header .brand", ("审", "阅"))):
                shots = [page.screenshot(clip=page.evaluate(BOX, [selector, ch])) for ch in chars]
                assert shots[0] != shots[1], selector
        finally:
            browser.close()


def test_the_font_route_serves_a_cached_subset_of_the_common_characters(
    served: str, tmp_path: Path
) -> None:
    if find_cjk_font() is None:
        pytest.skip("no CJK font to subset")
    import httpx

    response = httpx.get(f"{served}/font/cjk.woff", timeout=120)
    assert response.status_code == 200 and response.content[:4] == b"wOFF"
    assert len(response.content) < 2_000_000
    assert response.headers["cache-control"].startswith("public")
    chars = webfont.common_characters()
    assert {"登", "录", "脱", "敏", "审", "阅", "，", "A"} <= set(chars)
