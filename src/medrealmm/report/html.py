"""Render the self-contained HTML page: figures inlined as base64 PNG, a subset of the CJK font
inlined as WOFF, one small inline script that sorts tables, nothing from the network.

The leaderboard comes first, then a table of contents; every table of every section gets the
same treatment (sorting, a contents entry through its section, the page's language), so a
table registered in ``SECTIONS`` needs nothing else."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from medrealmm.report import i18n
from medrealmm.report.figures import RenderedFigure
from medrealmm.report.tables import Table
from medrealmm.report.webfont import font_face_css

COLUMN_NAMES = {
    "label": "模型 / 条件",
    "model": "模型",
    "images": "有图",
    "baseline": "离线基线",
    "online": "Online",
    "cases": "病例数",
    "consultations": "问诊数（重抽样单位）",
    "cases_shared": "共有病例数",
    "model_a": "条件 A 模型",
    "images_a": "A 有图",
    "grader_a": "A 评分器",
    "model_b": "条件 B 模型",
    "images_b": "B 有图",
    "grader_b": "B 评分器",
    "difference": "差值（A − B）",
    "p_value": "p 值",
    "mean_shared": "共有病例得分",
    "cases_older": "旧版本病例数",
    "mean_older": "旧版本得分",
    "cases_newer": "新版本病例数",
    "mean_newer": "新版本得分",
    "incomplete": "未完成",
    "refused": "拒答",
    "mean": "平均得分",
    "ci_low": "95% CI 下限",
    "ci_high": "95% CI 上限",
    "k": "k",
    "mean_at_k": "mean@k",
    "worst_at_k": "worst@k",
    "cases_at_k": "k 次齐全病例数",
    "positive_met": "正向标准（满足）",
    "negative_triggered": "负向标准（触发）",
    "with_images": "有图得分",
    "with_low": "有图 CI 下限",
    "with_high": "有图 CI 上限",
    "without_images": "无图得分",
    "without_low": "无图 CI 下限",
    "without_high": "无图 CI 上限",
    "gain": "图像增益",
    "stratum": "分层",
    "bin_low": "区间下限",
    "bin_high": "区间上限",
    "rater": "评分者",
    "responses": "回复数",
    "rater_a": "评分者 A",
    "rater_b": "评分者 B",
    "criteria": "标准",
    "n": "判定数",
    "ac1": "Gwet AC1",
    "kappa": "Cohen κ",
    "agreement": "原始一致率",
    "raters": "评分者",
    "llm_criteria": "LLM 评分判定数",
    "rule_criteria": "规则判定数",
    "quantity": "统计量",
    "name": "名称",
    "average": "均值",
    "count": "数量",
    "label_id": "标签",
    "median": "中位数",
    "min": "最小",
    "max": "最大",
    "share": "占比",
    "sample": "抽样病例",
    "decided": "已判定病例",
    "accepted": "接受病例",
    "rate": "接受率",
    "disagreements": "医生意见不一致",
    "undecided": "未判定",
    "outside_sample": "抽样外判定",
    "replies": "有测量的回复数",
    "median_s": "时延中位数（秒）",
    "p90_s": "时延 90 百分位（秒）",
    "within_20s": "20 秒内占比",
    "first_token_s": "首 token 时延中位数（秒）",
    "unknown_prompt_calls": "输入 token 未知的调用",
    "first_token_p90_s": "首 token 时延 90 百分位（秒）",
    "streamed": "流式回复数",
    "first_token_note": "无首 token 时延的原因",
    "tokens_per_s": "输出 token/秒（中位数）",
    "concurrency": "并发",
    "kind": "类型",
    "role": "来源",
    "value": "取值",
    "backend": "后端",
    "endpoint": "接口地址",
    "requested": "请求的模型 id",
    "served": "服务端报告的模型 id",
    "version": "版本",
    "checkpoint": "检查点或日期",
    "source": "说明文档或模型卡",
    "thinking": "思考强度",
    "decoding": "解码参数",
    "grader": "评审模型",
    "grader_served": "评审服务端 id",
    "package": "medrealmm 版本",
    "evaluations": "评测次数",
    "cases_own": "自身病例数",
    "mean_own": "自身全部病例得分",
    "reference": "参照",
    "axis": "分层维度",
    "items": "标准判定数",
    "pairs": "比较对数",
    "balanced_f1": "balanced F1",
    "f1_met": "F1（满足）",
    "f1_not_met": "F1（未满足）",
    "precision_met": "精确率（满足）",
    "recall_met": "召回率（满足）",
    "precision_not_met": "精确率（未满足）",
    "recall_not_met": "召回率（未满足）",
    "inside_spread": "在医生范围内",
    "f1_low": "F1 95% CI 下限",
    "f1_high": "F1 95% CI 上限",
}
CRITERIA_NAMES = {"all": "全部", "positive": "正向", "negative": "负向"}
THREE_DECIMALS = {
    *("ac1", "kappa", "agreement", "alpha", "balanced_f1", "f1_met", "f1_not_met", "f1_low"),
    *("f1_high", "precision_met", "recall_met", "precision_not_met", "recall_not_met"),
}

#: (heading, figure names, table names) in reading order: the leaderboard first. A section
#: with no figure and no table row is left out (the MCCP validation before any physician
#: decided), except the leaderboard, which says when it is empty.
SECTIONS = (
    ("总体结果（论文 4.2）", ("fig4a_overall",), ("overall", "versions")),
    (
        "数据集统计（论文 3.5、图 3）",
        ("fig3_dataset",),
        ("dataset_overview", "dataset_distributions", "dataset_intents", "dataset_stages"),
    ),
    ("MCCP 医生验证（论文 6.3）", (), ("mccp_acceptance",)),
    ("导入的回复：医生审慎作答（论文表 3）", (), ("deliberative",)),
    ("成对比较：两两条件的得分差（Paired differences）", (), ("paired_differences",)),
    ("被评模型与设置（论文表 4）", (), ("models",)),
    ("正向 / 负向分解", ("fig4b_decomposition",), ("decomposition",)),
    ("视觉信息的作用（论文 4.3）", ("fig5_images",), ("images",)),
    (
        "科室、意图与阶段（论文 4.4）",
        ("fig6a_department", "fig6b_intent_stage"),
        ("by_specialty_group", "by_department", "by_intent", "by_stage", "by_position"),
    ),
    ("评分维度（axis，同 HealthBench）", (), ("by_axis",)),
    ("单病例得分分布", ("fig7_histogram",), ("histogram",)),
    (
        "图片数量与对话轮数（论文 7.4）",
        ("fig11_images_turns",),
        ("by_image_count", "by_turn_count"),
    ),
    ("亚专科", ("fig12_subspecialty",), ("by_subspecialty",)),
    (
        "评测可信度：评分者一致性（论文 4.5、表 2）",
        (),
        ("agreement_subset", "rater_scores", "agreement", "agreement_rules"),
    ),
    ("时延与质量（论文 4.1：医生约 20 秒内回复）", ("fig_latency",), ("latency",)),
    (
        "评分器元评测：与医生判定的一致性（balanced F1）",
        (),
        ("meta_eval_headline", "meta_eval"),
    ),
    ("评分器：无法评估与评审团", (), ("abstentions", "panel_members", "panel_agreement")),
    ("调用、token 与费用", (), ("usage",)),
)


@dataclass
class HtmlTable:
    title: str
    header: list[str]
    rows: list[list[str]]
    name: str = ""  # file stem of the CSV/JSON beside the page; empty for derived views
    open: bool = False
    numeric: list[bool] = field(default_factory=list)  # right-align these columns


@dataclass
class Section:
    heading: str
    anchor: str = ""
    figures: list[dict[str, str]] = field(default_factory=list)
    tables: list[HtmlTable] = field(default_factory=list)


def cell(column: str, value: Any, lang: i18n.Lang = "zh") -> str:
    return i18n.cell_text(_cell(column, value), lang)


def _cell(column: str, value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "是" if value else "否"
    if column == "criteria":
        return CRITERIA_NAMES.get(value, str(value))
    if isinstance(value, float):
        return f"{value:.3f}" if column in THREE_DECIMALS else f"{value:.1f}"
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def html_table(table: Table, *, open_: bool = False, lang: i18n.Lang = "zh") -> HtmlTable:
    return HtmlTable(
        title=i18n.table_title(table.name, table.title, lang),
        header=[i18n.column(c, COLUMN_NAMES.get(c, c), lang) for c in table.columns],
        rows=[[cell(c, row.get(c), lang) for c in table.columns] for row in table.rows],
        numeric=[any(_is_number(r.get(c)) for r in table.rows) for c in table.columns],
        name=table.name,
        open=open_,
    )


def ac1_matrix(agreement: Table, lang: i18n.Lang = "zh") -> HtmlTable:
    """Table 2 at a glance: AC1 over all criteria for every rater pair, n in brackets."""
    rows = [r for r in agreement.rows if r["criteria"] == "all"]
    raters = list(dict.fromkeys([*(r["rater_a"] for r in rows), *(r["rater_b"] for r in rows)]))
    lookup = {}
    for r in rows:
        text = "—" if r["ac1"] is None else f"{r['ac1']:.3f}（n={r['n']}）"
        lookup[(r["rater_a"], r["rater_b"])] = lookup[(r["rater_b"], r["rater_a"])] = text
    return HtmlTable(
        title=i18n.table_title("ac1_matrix", "Gwet AC1 两两矩阵（全部标准）", lang),
        header=["", *(i18n.cell_text(r, lang) for r in raters)],
        rows=[
            [i18n.cell_text(a, lang), *("1" if a == b else lookup.get((a, b), "—") for b in raters)]
            for a in raters
        ],
        open=True,
    )


def render_html(
    tables: dict[str, Table],
    figures: list[RenderedFigure],
    *,
    lang: i18n.Lang = "zh",
    case_index: str | None = None,
    **context: Any,
) -> str:
    """The page in ``lang``; ``case_index``: the per-case pages' index, linked from the top."""
    by_name = {f.name: f for f in figures}
    sections = []
    for index, (heading, figure_names, table_names) in enumerate(SECTIONS):
        present = [n for n in table_names if n in tables]
        drawn = [n for n in figure_names if n in by_name]
        if index and not drawn and not any(tables[n].rows for n in present):
            continue  # nothing to show: Table 3 without imports, no MCCP decisions yet
        section = Section(i18n.heading(heading, table_names, lang), anchor=f"s{index}")
        for name in drawn:
            figure = by_name[name]
            data = base64.b64encode(figure.png).decode("ascii")
            caption = i18n.caption(name, figure.caption, lang)
            section.figures.append({"name": name, "caption": caption, "data": data})
        if "agreement" in present and tables["agreement"].rows:
            section.tables.append(ac1_matrix(tables["agreement"], lang))
        for position, name in enumerate(present):
            opened = position == 0 and name != "histogram"
            section.tables.append(html_table(tables[name], open_=opened, lang=lang))
        sections.append(section)
    environment = Environment(
        loader=PackageLoader("medrealmm.report", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
        keep_trailing_newline=True,
    )
    template = environment.get_template("report.html.j2")
    marker = "/* font-face */"
    page = template.render(
        sections=sections,
        figures=figures,
        font_face=marker,
        lang=lang,
        t=i18n.PAGE[lang],
        sort_script=SORT_SCRIPT,
        case_index=case_index,
        **context,
    )
    return page.replace(marker, font_face_css("".join(sorted(set(page)))), 1)


#: Click a header to sort its table by that column (numbers as numbers, "—" last), again to
#: reverse. Inline and small: the page stays one file that reads offline.
SORT_SCRIPT = r"""
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.querySelectorAll("thead th");
  heads.forEach(function (th, col) {
    th.tabIndex = 0;
    function key(row) {
      var text = ((row.cells[col] || {}).textContent || "").trim();
      if (text === "" || text === "\u2014") { return null; }
      var num = parseFloat(text.replace(/[,%]/g, ""));
      return /^[-+]?[\d.]/.test(text) && !isNaN(num) ? num : text;
    }
    function sort() {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === null || y === null) { return x === y ? 0 : (x === null ? 1 : -1); }
        if (typeof x !== typeof y) { return (typeof x === "number" ? -1 : 1) * dir; }
        return (x < y ? -1 : x > y ? 1 : 0) * dir;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
  });
});
"""
