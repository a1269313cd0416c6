"""The report's figures (paper Figs 4-7, 11, 12), drawn from its tables with Chinese labels.

Figures are built on ``matplotlib.figure.Figure`` (no pyplot state), so drawing is safe from
any thread and never opens a window.
"""

from __future__ import annotations

import io
import math
import warnings
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import matplotlib
import numpy as np
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, MaxNLocator
from matplotlib.transforms import Bbox
from PIL import Image

from medrealmm.fonts import MissingFontError, require_cjk_font
from medrealmm.report.i18n import Lang, cell_text, figure_text
from medrealmm.report.tables import SCALE, Table
from medrealmm.schema import PHYSICIAN_REPLY_S

matplotlib.use("Agg")

ONLINE_COLOR = "#c0392b"
MODEL_COLOR = "#2e86c1"
BASELINE_COLOR = "#aab7b8"
POSITIVE_COLOR = "#27ae60"
NEGATIVE_COLOR = "#e74c3c"
DPI = 110
HEAT_MAP = matplotlib.colormaps["viridis"].with_extremes(bad="#eeeeee")  # grey: no case


class MissingFontWarning(UserWarning):
    """Figures were drawn without a CJK font: their Chinese labels show as empty boxes."""


@cache
def cjk_family() -> str | None:
    """Register the CJK font with matplotlib once; its family name goes first in the rc.

    Without one the report is still written: one warning says why its labels are boxes.
    """
    try:
        path = require_cjk_font()
    except MissingFontError as exc:
        warnings.warn(f"{exc}; figure labels will show as boxes", MissingFontWarning, stacklevel=2)
        return None
    font_manager.fontManager.addfont(str(path))
    return font_manager.FontProperties(fname=str(path)).get_name()


def chinese_style() -> AbstractContextManager[Any]:
    family = cjk_family()
    return matplotlib.rc_context(
        {
            "font.family": "sans-serif",
            "font.sans-serif": [family, "DejaVu Sans"] if family else ["DejaVu Sans"],
            "axes.unicode_minus": False,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )


def png_bytes(draw: Callable[[], Figure]) -> bytes:
    """The figure cropped to what it draws, as ``bbox_inches="tight"`` crops it, in one draw.

    A tight save lays the figure out twice before it draws it (once to measure, once for the
    bounding box); here it is drawn once with room around it (labels reach past its edges)
    and the drawn pixels are cropped, with the same padding. A figure that fills that room
    is saved the tight way."""
    with chinese_style(), warnings.catch_warnings():
        if cjk_family() is None:  # said once by cjk_family, not once per missing glyph
            warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)
        figure = draw()
        pixels = _drawn_with_margin(figure)
        box = None if pixels is None else _content_box(pixels)
        if pixels is None or box is None:
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
            return buffer.getvalue()
    return _png(pixels[box])


#: Room drawn around a figure, in inches, for what reaches past its edges (long labels).
MARGIN_IN = 2.0
#: Blank kept around what a figure draws: matplotlib's default ``savefig.pad_inches``, fixed
#: here so a user's matplotlibrc does not change the report.
PAD_IN = 0.1


def _drawn_with_margin(figure: Figure) -> np.ndarray | None:
    """The figure drawn at ``DPI`` with ``MARGIN_IN`` on every side, as rows of RGBA pixels;
    None if the buffer is not the size Agg was expected to draw."""
    # sizes half a pixel from a whole one: Agg's canvas is then the whole part, read alike
    # whether it rounds or truncates
    inches = figure.get_size_inches() + 2 * MARGIN_IN
    width, height = ((math.floor(size * DPI) + 0.5) / DPI for size in inches)
    room = Bbox.from_bounds(-MARGIN_IN, -MARGIN_IN, width, height)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="rgba", dpi=DPI, bbox_inches=room)
    columns, rows = int(width * DPI), int(height * DPI)
    data = buffer.getbuffer()
    if len(data) != rows * columns * 4:
        return None
    return np.frombuffer(data, dtype=np.uint8).reshape(rows, columns, 4)


def _content_box(pixels: np.ndarray) -> tuple[slice, slice] | None:
    """Rows and columns of every pixel unlike the background, padded by ``PAD_IN``; None
    when the drawing reaches the margin's edge (cut off)."""
    packed = pixels.view(np.uint32)[..., 0]  # one number a pixel
    drawn = packed != packed[0, 0]
    rows, columns = np.flatnonzero(drawn.any(axis=1)), np.flatnonzero(drawn.any(axis=0))
    if not len(rows):
        return None
    pad = round(PAD_IN * DPI)
    top, bottom = rows[0] - pad, rows[-1] + 1 + pad
    left, right = columns[0] - pad, columns[-1] + 1 + pad
    if top <= 0 or left <= 0 or bottom >= len(drawn) or right >= len(drawn[0]):
        return None
    return slice(top, bottom), slice(left, right)


def _png(pixels: np.ndarray) -> bytes:
    """PNG of RGBA ``pixels``; opaque ones (every figure's) as RGB, a quarter less to store."""
    opaque = bool((pixels[..., 3] == 255).all())
    image = Image.fromarray(np.ascontiguousarray(pixels[..., :3] if opaque else pixels))
    buffer = io.BytesIO()
    image.save(buffer, format="png", dpi=(DPI, DPI))
    return buffer.getvalue()


def _bar_color(row: dict[str, Any]) -> str:
    if row.get("online"):
        return ONLINE_COLOR
    return BASELINE_COLOR if row.get("baseline") else MODEL_COLOR


def _height(rows: int) -> float:
    return 1.2 + 0.42 * max(rows, 1)


def overall_figure(overall: Table) -> Figure:
    """Fig 4a: mean score with its 95% CI, best on top; Online red, baselines grey."""
    rows = [r for r in overall.rows if r["mean"] is not None][::-1]
    figure = Figure(figsize=(8, _height(len(rows))))
    ax = figure.subplots()
    y = np.arange(len(rows))
    means = np.array([r["mean"] for r in rows])
    errors = np.array([[r["mean"] - r["ci_low"], r["ci_high"] - r["mean"]] for r in rows]).T
    ax.barh(y, means, xerr=errors, color=[_bar_color(r) for r in rows], capsize=3)
    ax.set_yticks(y, [r["label"] for r in rows])
    for yi, row in zip(y, rows, strict=True):
        ax.text(row["ci_high"] + 1.5, yi, f"{row['mean']:.1f}", va="center", fontsize=8)
    ax.set_xlim(0, SCALE)
    ax.set_xlabel("得分（0–100，误差线为 95% 置信区间）")
    ax.set_title("图 4a  总体得分")
    return figure


def decomposition_figure(table: Table) -> Figure:
    """Fig 4b: positives met (right) against negatives triggered (left) per case."""
    rows = table.rows[::-1]
    figure = Figure(figsize=(8, _height(len(rows))))
    ax = figure.subplots()
    y = np.arange(len(rows))
    ax.barh(y, [r["positive_met"] for r in rows], color=POSITIVE_COLOR, label="满足的正向标准")
    ax.barh(
        y, [-r["negative_triggered"] for r in rows], color=NEGATIVE_COLOR, label="触发的负向标准"
    )
    ax.axvline(0, color="black", linewidth=0.8)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{abs(value):g}"))
    ax.set_yticks(y, [r["label"] for r in rows])
    ax.set_xlabel("每例平均标准数（负向在左）")
    ax.set_title("图 4b  正向 / 负向标准分解")
    ax.legend(loc="lower right", fontsize=8)
    return figure


def images_figure(table: Table) -> Figure:
    """Fig 5: each model with and without the patient's images."""
    rows = table.rows[::-1]
    figure = Figure(figsize=(8, _height(2 * len(rows))))
    ax = figure.subplots()
    y = np.arange(len(rows))
    for offset, prefix, label, color in (
        (0.2, "with", "有图", MODEL_COLOR),
        (-0.2, "without", "无图", BASELINE_COLOR),
    ):
        key = "with_images" if prefix == "with" else "without_images"
        means = np.array([r[key] for r in rows])
        errors = np.array(
            [[r[key] - r[f"{prefix}_low"], r[f"{prefix}_high"] - r[key]] for r in rows]
        ).T
        ax.barh(y + offset, means, height=0.38, xerr=errors, color=color, label=label, capsize=2)
    ax.set_yticks(y, [r["model"] for r in rows])
    ax.set_xlim(0, SCALE)
    ax.set_xlabel("得分（0–100）")
    ax.set_title("图 5  有图与无图输入对比")
    ax.legend(loc="lower right", fontsize=8)
    return figure


def latency_figure(table: Table, line_s: float) -> Figure:
    """Quality against median reply time per model, the physician's ~20 s as a line; each
    point's bar spans the median to the 90th percentile, and a hollow point on the same row
    marks the median time to first token where replies were streamed."""
    rows = [r for r in table.rows if r["mean"] is not None]
    figure = Figure(figsize=(7, 4.2))
    ax = figure.subplots()
    placed: list[tuple[float, float]] = []
    for row in rows:
        x, y = max(row["median_s"], 1e-3), row["mean"]
        # points that coincide (the offline baseline with and without images) get their
        # labels stacked, each with a leader line, instead of printed over one another
        near = sum(abs(np.log10(x / px)) < 0.15 and abs(y - py) < 4 for px, py in placed)
        placed.append((x, y))
        ax.errorbar(
            x, y, xerr=[[0], [max(row["p90_s"] - row["median_s"], 0)]], fmt="o",
            color=MODEL_COLOR, capsize=2,
        )  # fmt: skip
        if row.get("first_token_s") is not None:
            ax.plot(max(row["first_token_s"], 1e-3), y, marker="o", mfc="none",
                    color=MODEL_COLOR, linestyle="none")  # fmt: skip
        share = f"{row['within_20s'] * 100:.0f}%"
        ax.annotate(
            f"{row['label']}（{share} ≤ {line_s:.0f}s）", (x, y), fontsize=7,
            xytext=(6, 4 + 11 * near), textcoords="offset points",
            arrowprops={"arrowstyle": "-", "color": "#999", "lw": 0.5} if near else None,
        )  # fmt: skip
    ax.axvline(line_s, color=ONLINE_COLOR, linestyle="--", linewidth=1)
    ax.text(line_s, SCALE * 0.02, f" {line_s:.0f} 秒", color=ONLINE_COLOR, fontsize=8)
    ax.set_xscale("log")
    ax.set_ylim(0, SCALE)
    ax.set_xlabel("回复时延中位数（秒，对数轴；横线至 90 百分位；空心点为首 token 时延中位数）")
    ax.set_ylabel("得分（0–100）")
    ax.set_title("时延与质量")
    return figure


def _matrix(table: Table, labels: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    strata = list(dict.fromkeys(r["stratum"] for r in table.rows))
    values = np.full((len(labels), len(strata)), np.nan)
    cases = np.zeros((len(labels), len(strata)), dtype=int)
    for row in table.rows:
        cell = labels.index(row["label"]), strata.index(row["stratum"])
        cases[cell] = row.get("cases") or 0
        if row["mean"] is not None:
            values[cell] = row["mean"]
    return strata, values, cases


def _heatmap(ax: Axes, table: Table, labels: list[str], title: str, *, first: bool) -> AxesImage:
    """Mean score and n (cases) in every cell: small strata are visibly small (paper 4.4)."""
    strata, values, cases = _matrix(table, labels)
    # a cell's colour is as solid as its n is large: a mean over two cases reads pale
    most = max(int(cases.max()), 1) if cases.size else 1
    alpha = 0.25 + 0.75 * np.sqrt(cases / most)
    image = ax.imshow(
        np.ma.masked_invalid(values), cmap=HEAT_MAP, vmin=0, vmax=SCALE, aspect="auto",
        alpha=alpha,
    )  # fmt: skip
    ax.set_xticks(range(len(strata)), strata, rotation=35, ha="right")
    ax.set_yticks(range(len(labels)), labels if first else [])
    for (i, j), value in np.ndenumerate(values):
        if not np.isnan(value):
            color = "white" if value < SCALE * 0.6 and alpha[i, j] > 0.6 else "black"
            text = f"{value:.0f}\nn={cases[i, j]}"
            ax.text(j, i, text, ha="center", va="center", fontsize=6, color=color)
    ax.set_title(title)
    return image


def heatmap_figure(tables: Sequence[Table], titles: Sequence[str]) -> Figure:
    """Figs 6a, 6b, 12: models x strata, mean score and n in each cell; grey = no case."""
    labels = list(dict.fromkeys(r["label"] for t in tables for r in t.rows))
    widest = max(len({r["stratum"] for r in t.rows}) for t in tables)
    width = min(3 + 0.7 * widest, 16) * len(tables) + 1
    figure = Figure(figsize=(width, 1.8 + 0.5 * len(labels)))
    axes = figure.subplots(1, len(tables), squeeze=False)[0]
    image = None
    for index, (ax, table, title) in enumerate(zip(axes, tables, titles, strict=True)):
        image = _heatmap(ax, table, labels, title, first=index == 0)
    if image is not None:
        figure.colorbar(
            image, ax=list(axes), label="平均得分（0–100；颜色越淡，病例数 n 越少）", fraction=0.04
        )
    return figure


def histogram_figure(table: Table) -> Figure:
    """Fig 7: per-case score distribution, one panel a model."""
    labels = list(dict.fromkeys(r["label"] for r in table.rows))
    columns = min(3, len(labels))
    lines = -(-len(labels) // columns)
    figure = Figure(figsize=(4 * columns, 2.6 * lines))
    # fixed spacing, not ``tight_layout``: that lays every panel's text out once more before
    # ``png_bytes`` draws it
    spacing = {"hspace": 0.6, "wspace": 0.3}
    axes = figure.subplots(lines, columns, squeeze=False, gridspec_kw=spacing).ravel()
    for ax, label in zip(axes, labels, strict=False):
        rows = [r for r in table.rows if r["label"] == label]
        ax.bar(
            [r["bin_low"] for r in rows],
            [r["cases"] for r in rows],
            width=[r["bin_high"] - r["bin_low"] for r in rows],
            align="edge",
            color=MODEL_COLOR,
            edgecolor="white",
        )
        ax.set_title(label, fontsize=9)
        ax.set_xlim(0, SCALE)
        ax.set_xlabel("单例得分")
        ax.set_ylabel("病例数")
    for ax in axes[len(labels) :]:
        ax.set_visible(False)
    figure.suptitle("图 7  单病例得分分布")
    return figure


def trend_figure(tables: Sequence[Table], titles: Sequence[str]) -> Figure:
    """Fig 11: score against image count and dialogue turns, one line a model."""
    figure = Figure(figsize=(6 * len(tables), 4))
    axes = figure.subplots(1, len(tables), squeeze=False)[0]
    for ax, table, title in zip(axes, tables, titles, strict=True):
        strata = list(dict.fromkeys(r["stratum"] for r in table.rows))
        for label in dict.fromkeys(r["label"] for r in table.rows):
            points = [
                (strata.index(r["stratum"]), r["mean"])
                for r in table.rows
                if r["label"] == label and r["mean"] is not None
            ]
            if points:
                xs, ys = zip(*points, strict=True)
                ax.plot(xs, ys, marker="o", label=label)
        ax.set_xticks(range(len(strata)), strata)
        ax.set_ylim(0, SCALE)
        ax.set_xlabel(title)
        ax.set_ylabel("平均得分")
    axes[-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1))
    figure.suptitle("图 11  得分与图片数量、对话轮数的关系")
    return figure


def dataset_figure(distributions: Table, intents: Table, stages: Table) -> Figure:
    """Fig 3: the benchmark's shape, as distributions: one bar per value of turns, images,
    rubric size and positive / negative criteria per instance, then intents and stages."""
    quantities = list(dict.fromkeys(r["quantity"] for r in distributions.rows))
    figure = Figure(figsize=(13, 6))
    axes = figure.subplots(2, 4, gridspec_kw={"hspace": 0.45, "wspace": 0.45}).ravel()
    for ax, quantity in zip(axes, quantities, strict=False):
        rows = [r for r in distributions.rows if r["quantity"] == quantity]
        ax.bar([r["value"] for r in rows], [r["cases"] for r in rows], color=MODEL_COLOR)
        ax.set_title(rows[0]["name"], fontsize=9)
        ax.set_ylabel("实例数", fontsize=8)
        values = [r["value"] for r in rows]
        if len(values) <= 12:
            ax.set_xticks(values)
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.tick_params(labelsize=7)
    for ax, table, title in zip(
        axes[len(quantities) :], (intents, stages), ("患者意图", "问诊阶段"), strict=False
    ):
        rows = table.rows[::-1]
        ax.barh(range(len(rows)), [r["cases"] for r in rows], color=POSITIVE_COLOR)
        ax.set_yticks(range(len(rows)), [r["name"] for r in rows], fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("实例数", fontsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    for ax in axes[len(quantities) + 2 :]:
        ax.set_visible(False)
    figure.suptitle("图 3  数据集分布")
    return figure


@dataclass(frozen=True)
class RenderedFigure:
    name: str  # file stem
    caption: str
    png: bytes


def render_figures(tables: dict[str, Table], lang: Lang = "zh") -> list[RenderedFigure]:
    """Every figure whose table has data; a figure with nothing to show is left out. In
    English (``lang``) the row labels, titles and axes are English; data such as department
    names stay as recorded."""
    if lang != "zh":
        tables = {name: _labels_in(table, lang) for name, table in tables.items()}
    plans: list[tuple[str, str, list[str], Callable[[], Figure]]] = [
        (
            "fig3_dataset",
            "图 3 数据集分布",
            ["dataset_distributions", "dataset_intents", "dataset_stages"],
            lambda: dataset_figure(
                tables["dataset_distributions"], tables["dataset_intents"], tables["dataset_stages"]
            ),
        ),
        ("fig4a_overall", "图 4a 总体得分", ["overall"], lambda: overall_figure(tables["overall"])),
        (
            "fig4b_decomposition",
            "图 4b 正向 / 负向标准分解",
            ["decomposition"],
            lambda: decomposition_figure(tables["decomposition"]),
        ),
        ("fig5_images", "图 5 有图与无图", ["images"], lambda: images_figure(tables["images"])),
        (
            "fig6a_department",
            "图 6a 按专科大类",
            ["by_specialty_group"],
            lambda: heatmap_figure([tables["by_specialty_group"]], ["图 6a  按专科大类的平均得分"]),
        ),
        (
            "fig6b_intent_stage",
            "图 6b 按患者意图与问诊阶段",
            ["by_intent", "by_stage"],
            lambda: heatmap_figure(
                [tables["by_intent"], tables["by_stage"]],
                ["图 6b  按患者意图", "按问诊阶段"],
            ),
        ),
        (
            "fig7_histogram",
            "图 7 单病例得分分布",
            ["histogram"],
            lambda: histogram_figure(tables["histogram"]),
        ),
        (
            "fig11_images_turns",
            "图 11 得分与图片数量、对话轮数",
            ["by_image_count", "by_turn_count"],
            lambda: trend_figure(
                [tables["by_image_count"], tables["by_turn_count"]], ["图片数量", "对话轮数"]
            ),
        ),
        (
            "fig_latency",
            "时延与质量（虚线：医生约 20 秒内回复）",
            ["latency"],
            lambda: latency_figure(tables["latency"], PHYSICIAN_REPLY_S),
        ),
        (
            "fig12_subspecialty",
            "图 12 按亚专科",
            ["by_subspecialty"],
            lambda: heatmap_figure([tables["by_subspecialty"]], ["图 12  按亚专科的平均得分"]),
        ),
    ]
    rendered = []
    for name, caption, needs, draw in plans:
        if all(name_ in tables and _has_scores(tables[name_]) for name_ in needs):
            drawn = draw if lang == "zh" else _in_english(draw)
            rendered.append(RenderedFigure(name, caption, png_bytes(drawn)))
    return rendered


def _labels_in(table: Table, lang: Lang) -> Table:
    if not table.rows or "label" not in table.rows[0]:
        return table
    rows = [{**row, "label": cell_text(str(row["label"]), lang)} for row in table.rows]
    return replace(table, rows=rows)


def _in_english(draw: Callable[[], Figure]) -> Callable[[], Figure]:
    """``draw``, then every fixed text of the figure (titles, axis labels, legends, notes)
    in English; tick labels come from the (already English) tables."""

    def drawn() -> Figure:
        figure = draw()
        for text in figure.findobj(Text):
            content = text.get_text()
            if content:
                text.set_text(figure_text(content))
        return figure

    return drawn


def _has_scores(table: Table) -> bool:
    return any(
        row.get(key) is not None
        for row in table.rows
        for key in ("mean", "cases", "with_images", "positive_met")
    )
