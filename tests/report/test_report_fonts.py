"""The CJK font comes with the install; without any font the report still renders."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from matplotlib.figure import Figure
from matplotlib.ft2font import FT2Font

from medrealmm import fonts
from medrealmm.report import figures

LABELS = "医生小组有图得分皮肤科内分泌科"


@pytest.fixture()
def no_system_fonts(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Discovery sees only what the Python install brings, as on a bare machine."""
    monkeypatch.delenv(fonts.FONT_ENV, raising=False)
    monkeypatch.setattr(fonts, "system_font", lambda: None)
    fonts.find_cjk_font.cache_clear()
    figures.cjk_family.cache_clear()
    yield
    fonts.find_cjk_font.cache_clear()
    figures.cjk_family.cache_clear()


def _chinese_figure() -> Figure:
    figure = Figure(figsize=(3, 2))
    figure.add_subplot().set_title(LABELS)
    return figure


def _render() -> tuple[bytes, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = figures.png_bytes(_chinese_figure)
    return png, [str(w.message) for w in caught]


def test_the_packaged_font_is_found_without_system_fonts(no_system_fonts: None) -> None:
    font = fonts.find_cjk_font()
    assert font is not None and font == fonts.packaged_font()
    assert "noto_cjk_sans_otc" in font.parts
    charmap = FT2Font(str(font)).get_charmap()
    assert all(ord(char) in charmap for char in LABELS)
    png, caught = _render()
    assert png.startswith(b"\x89PNG") and figures.cjk_family()
    assert not [w for w in caught if "missing from font" in w]


def test_no_font_at_all_still_renders_with_one_clear_warning(
    no_system_fonts: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fonts, "packaged_font", lambda: None)
    with pytest.raises(fonts.MissingFontError, match=fonts.FONT_PACKAGE):
        fonts.require_cjk_font()
    png, caught = _render()
    assert png.startswith(b"\x89PNG") and figures.cjk_family() is None
    assert [w for w in caught if fonts.FONT_PACKAGE in w and "boxes" in w]
    assert not [w for w in caught if "missing from font" in w]  # not one per glyph


def test_a_configured_font_that_is_not_a_file_is_named(
    no_system_fonts: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(fonts.FONT_ENV, str(tmp_path / "nope.ttf"))
    with pytest.raises(fonts.MissingFontError, match=r"nope\.ttf is not a font file"):
        fonts.find_cjk_font()


def _embedded_font(html: str) -> bytes:
    import base64
    import re

    found = re.search(r"url\(data:font/woff;base64,([A-Za-z0-9+/=]+)\)", html)
    assert found, "the page carries no embedded font"
    return base64.b64decode(found.group(1))


def test_the_page_embeds_a_subset_with_every_character_it_shows(built_report) -> None:
    import io
    import re

    from fontTools.ttLib import TTFont

    from medrealmm.report.webfont import FAMILY

    html = built_report.html.read_text(encoding="utf-8")
    assert f'font-family: "{FAMILY}"' in html and f'"{FAMILY}", "Noto Sans CJK SC"' in html
    data = _embedded_font(html)
    assert len(data) < 2_000_000  # a subset, not the 19 MB collection
    cmap = TTFont(io.BytesIO(data)).getBestCmap()
    text = re.sub(r"data:[^)\"']+", "", html)
    assert [c for c in sorted(set(text)) if ord(c) > 0x2E80 and ord(c) not in cmap] == []


def test_the_definitions_paragraph_is_in_chinese(built_report) -> None:
    from medrealmm.evaluate import K_DEFINITIONS, K_DEFINITIONS_ZH

    html = built_report.html.read_text(encoding="utf-8")
    assert K_DEFINITIONS_ZH in html and K_DEFINITIONS not in html


def test_the_embedded_subset_is_the_same_bytes_on_every_build() -> None:
    """Two builds of one report must not differ: the subset keeps the face's own timestamp."""
    import time

    from medrealmm.report import webfont

    path = webfont.find_cjk_font()
    if path is None:
        pytest.skip("no CJK font")
    first = webfont.subset_woff(path, "会诊报告")
    time.sleep(1.1)  # the head table's modified time counts whole seconds
    assert webfont.subset_woff(path, "会诊报告") == first


def test_a_subset_is_cut_once_and_read_back_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's subset is kept under the font's digest and the characters: the same page
    text reads the same bytes back without cutting the font again."""
    from medrealmm.report import webfont

    path = webfont.find_cjk_font()
    if path is None:
        pytest.skip("no CJK font")
    monkeypatch.setenv(webfont.CACHE_ENV, str(tmp_path))
    cut = webfont.subset_woff
    calls: list[str] = []

    def counted(font: Path, text: str) -> bytes:
        calls.append(text)
        return cut(font, text)

    monkeypatch.setattr(webfont, "subset_woff", counted)
    first = webfont.cached_subset(path, "会诊报告")
    assert webfont.cached_subset(path, "会诊报告") == first == cut(path, "会诊报告")
    assert webfont.cached_subset(path, "会诊") != first  # other characters: another subset
    assert calls == ["会诊报告", "会诊"] and len(list(tmp_path.glob("*.woff"))) == 2
    monkeypatch.setenv(webfont.CACHE_ENV, "off")
    assert webfont.cached_subset(path, "会诊报告") == first and len(calls) == 3
