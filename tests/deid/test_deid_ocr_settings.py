"""The recognizer's padded width: fixed by default, set from the environment for benchmarks."""

from __future__ import annotations

import pytest

from medrealmm.deid import ocr


def test_rec_width_defaults_to_the_narrow_padding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ocr.REC_WIDTH_ENV, raising=False)
    assert ocr.rec_width() == ocr.REC_WIDTH < 320


@pytest.mark.parametrize(("raw", "width"), [("320", 320), ("8", 48), ("wide", ocr.REC_WIDTH)])
def test_rec_width_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, raw: str, width: int
) -> None:
    """rapidocr's own 320 can be asked for; below one glyph square, or not a number, is not."""
    monkeypatch.setenv(ocr.REC_WIDTH_ENV, raw)
    assert ocr.rec_width() == width
