"""Figures are cropped to what they draw in one draw, as a tight save crops them."""

from __future__ import annotations

import io

import numpy as np
from matplotlib.figure import Figure
from PIL import Image

from medrealmm.report import figures


def _labelled(label: str) -> Figure:
    figure = Figure(figsize=(4, 2))
    ax = figure.subplots()
    ax.barh([0, 1], [3, 5])
    ax.set_yticks([0, 1], [label, "乙"])
    ax.set_title("标题")
    return figure


def _tight(figure: Figure) -> Image.Image:
    buffer = io.BytesIO()
    with figures.chinese_style():
        figure.savefig(buffer, format="png", dpi=figures.DPI, bbox_inches="tight")
    return Image.open(buffer)


def test_the_crop_is_the_tight_save_to_a_pixel_or_two() -> None:
    """Labels reaching past the figure's left edge are kept, padding as a tight save."""
    label = "一个很长的模型名称 · 图文（离线基线）"
    image = Image.open(io.BytesIO(figures.png_bytes(lambda: _labelled(label))))
    tight = _tight(_labelled(label))
    assert tight.width > 4 * figures.DPI  # the label does reach past the edge
    assert abs(image.width - tight.width) <= 3 and abs(image.height - tight.height) <= 3
    pixels = np.asarray(image.convert("RGB"))
    pad = round(figures.PAD_IN * figures.DPI)
    assert (pixels[: pad - 1] == 255).all() and (pixels[:, : pad - 1] == 255).all()
    assert (pixels[pad + 1] != 255).any() or (pixels[:, pad + 1] != 255).any()


def test_a_figure_wider_than_its_margin_is_saved_the_tight_way() -> None:
    label = "很长" * 40  # several inches past the edge: more than the margin drawn around it
    image = Image.open(io.BytesIO(figures.png_bytes(lambda: _labelled(label))))
    assert image.size == _tight(_labelled(label)).size
