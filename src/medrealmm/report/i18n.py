"""One language per report page (``--lang zh|en``, Chinese by default).

Tables are computed once, in Chinese (their CSV/JSON keep the stored titles); the page is
rendered in the chosen language. A table, column or section registered without an English
name here still renders in English: its identifier, spelled out ("paired_differences" ->
"Paired differences"), so no Chinese sentence lands on an English page. On a Chinese page the
English notes the pipeline records (why a reply was not streamed) are given in Chinese."""

from __future__ import annotations

import re
from typing import Literal

Lang = Literal["zh", "en"]
LANGS: tuple[Lang, ...] = ("zh", "en")
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")

PAGE: dict[Lang, dict[str, str]] = {
    "zh": {
        "html_lang": "zh-CN",
        "title": "MedRealMM 评测报告",
        "contents": "目录",
        "cases_link": "逐病例结果：每个模型满足或未满足的评分标准",
        "download": "下载",
        "no_data": "无数据。",
        "no_figures": "运行库中没有可用的评分记录：尚无可绘制的图表。",
        "sort_hint": "点击表头排序",
        "case": "病例",
        "cases_title": "逐病例结果",
        "back": "返回报告",
        "all_cases": "全部病例",
        "criterion": "评分标准",
        "weight": "权重",
        "kind": "类型",
        "score": "病例得分",
        "met": "满足",
        "not_met": "未满足",
        "abstained": "无法评估",
        "failed": "判定失败",
        "missing": "无判定",
        "rule": "规则",
        "legend": (
            "✓ 满足（负向标准：被触发），✗ 未满足，? 无法评估，! 判定失败，— 无判定。"
            "得分为第 0 次采样的病例得分（0–100）。"
        ),
        "department": "科室",
        "intent": "意图",
        "stage": "阶段",
        "rubric_unapproved": "评分标准尚未经医生批准",
    },
    "en": {
        "html_lang": "en",
        "title": "MedRealMM evaluation report",
        "contents": "Contents",
        "cases_link": "Per-case results: the criteria each model met or missed",
        "download": "Download",
        "no_data": "No data.",
        "no_figures": "The run holds no usable scores: there is nothing to plot yet.",
        "sort_hint": "click a column header to sort",
        "case": "Case",
        "cases_title": "Per-case results",
        "back": "Back to the report",
        "all_cases": "All cases",
        "criterion": "Criterion",
        "weight": "Weight",
        "kind": "Kind",
        "score": "Case score",
        "met": "met",
        "not_met": "not met",
        "abstained": "cannot assess",
        "failed": "failed",
        "missing": "no verdict",
        "rule": "rule",
        "legend": (
            "✓ met (a negative criterion: triggered), ✗ not met, ? cannot assess, ! the verdict "
            "failed, — no verdict. Scores are sample 0's case score (0-100)."
        ),
        "department": "Department",
        "intent": "Intent",
        "stage": "Stage",
        "rubric_unapproved": "rubric not yet approved by physicians",
    },
}

#: English headings of the page's sections, by their Chinese heading (``html.SECTIONS``)
SECTION_EN = {
    "总体结果（论文 4.2）": "Leaderboard (paper 4.2)",
    "数据集统计（论文 3.5、图 3）": "Dataset statistics (paper 3.5, Fig. 3)",
    "MCCP 医生验证（论文 6.3）": "MCCP validation by physicians (paper 6.3)",
    "导入的回复：医生审慎作答（论文表 3）": "Imported replies: deliberate physicians (Table 3)",
    "被评模型与设置（论文表 4）": "Evaluated models and settings (Table 4)",
    "正向 / 负向分解": "Positive / negative decomposition",
    "视觉信息的作用（论文 4.3）": "The role of images (paper 4.3)",
    "科室、意图与阶段（论文 4.4）": "Departments, intents and stages (paper 4.4)",
    "单病例得分分布": "Per-case score distribution",
    "图片数量与对话轮数（论文 7.4）": "Image count and dialogue turns (paper 7.4)",
    "亚专科": "Sub-specialties",
    "评测可信度：评分者一致性（论文 4.5、表 2）": "Judge agreement (paper 4.5, Table 2)",
    "时延与质量（论文 4.1：医生约 20 秒内回复）": (
        "Latency and quality (paper 4.1: physicians reply within about 20 s)"
    ),
    "评分器元评测：与医生判定的一致性（balanced F1）": (
        "Grader meta-evaluation: agreement with physicians (balanced F1)"
    ),
    "评分器：无法评估与评审团": "Graders: abstentions and panels",
    "调用、token 与费用": "Calls, tokens and cost",
}

TITLE_EN = {
    "overall": (
        "Overall Score with 95% bootstrap CIs (Fig. 4a; consultations resampled whole); "
        "incomplete cases are listed apart, never averaged as 0; refusals count 0 and are listed"
    ),
    "versions": "Release versions compared (living benchmark)",
    "deliberative": "Online, imported replies and the strongest model on the same cases (Table 3)",
    "models": "Evaluated models (Table 4): endpoint, served model id, thinking, decoding",
    "decomposition": "Positive criteria met and negative criteria triggered per case (Fig. 4b)",
    "images": "With and without images (Fig. 5)",
    "by_specialty_group": "Score by specialty group",
    "by_department": "Score by department",
    "by_subspecialty": "Score by sub-specialty",
    "by_intent": "Score by patient intent",
    "by_stage": "Score by consultation stage",
    "by_position": "Score by the challenge point's position in its consultation",
    "by_image_count": "Score by image count",
    "by_turn_count": "Score by dialogue turns",
    "histogram": "Per-case score distribution (Fig. 7)",
    "dataset_overview": "Dataset statistics per instance (paper 3.5, Fig. 3)",
    "dataset_distributions": "Dataset distributions (Fig. 3): instances per value",
    "dataset_intents": "Patient intents (Fig. 3)",
    "dataset_stages": "Consultation stages (Fig. 3)",
    "mccp_acceptance": "MCCP validation by physicians (paper 6.3), per case",
    "agreement_subset": "What Table 2 is computed on: one model's replies every rater judged",
    "rater_scores": "Each rater's mean score on the same replies (Table 2)",
    "agreement": "Pairwise agreement (Table 2): Gwet's AC1, Cohen's kappa, raw agreement",
    "agreement_rules": "Agreement on the code-checked length rules (not in Table 2)",
    "ac1_matrix": "Gwet's AC1 between every pair of raters (all criteria)",
    "latency": "Reply latency beside quality (latency never changes a score)",
    "meta_eval_headline": "Graders against physicians (balanced F1, all physicians)",
    "meta_eval": "Grader meta-evaluation: precision, recall and F1 against each physician",
    "abstentions": "Criteria a grader could not assess, by grader and model",
    "panel_members": "Judge panel members: calls and tokens",
    "panel_agreement": "Judge panel agreement: Krippendorff's alpha and pairwise AC1",
    "usage": "Model calls, tokens and cost by stage and model",
}

CAPTION_EN = {
    "fig3_dataset": "Fig. 3 Dataset distributions",
    "fig4a_overall": "Fig. 4a Overall Score",
    "fig4b_decomposition": "Fig. 4b Positive / negative criteria",
    "fig5_images": "Fig. 5 With and without images",
    "fig6a_department": "Fig. 6a By specialty group",
    "fig6b_intent_stage": "Fig. 6b By patient intent and consultation stage",
    "fig7_histogram": "Fig. 7 Per-case score distribution",
    "fig11_images_turns": "Fig. 11 Score against image count and dialogue turns",
    "fig_latency": "Latency and quality (dashed line: a physician's reply within about 20 s)",
    "fig12_subspecialty": "Fig. 12 By sub-specialty",
}

COLUMN_EN = {
    "label": "Model / condition",
    "images": "Images",
    "baseline": "Offline baseline",
    "cases": "Cases",
    "consultations": "Consultations (resampled units)",
    "mean": "Score",
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "positive_met": "Positive met",
    "negative_triggered": "Negative triggered",
    "with_images": "Score with images",
    "without_images": "Score without images",
    "gain": "Gain from images",
    "median_s": "Median latency (s)",
    "p90_s": "90th percentile latency (s)",
    "within_20s": "Share within 20 s",
    "first_token_s": "Median time to first token (s)",
    "first_token_p90_s": "90th percentile time to first token (s)",
    "first_token_note": "Why no time to first token",
    "tokens_per_s": "Output tokens/s (median)",
    "replies": "Measured replies",
    "streamed": "Streamed replies",
    "ac1": "Gwet AC1",
    "kappa": "Cohen κ",
    "n": "Verdicts",
    "rate": "Acceptance rate",
    "served": "Served model id",
    "requested": "Requested model id",
    "package": "medrealmm version",
    "mean_at_k": "mean@k",
    "worst_at_k": "worst@k",
    "cases_at_k": "Cases with all k",
}

#: Chinese fragments of row labels (``tables.condition_label``) and their English
_LABEL_EN = (
    ("Online（医生原始回复）", "Online (physicians' replies)"),
    (" · 图文", " · images"),
    (" · 纯文本", " · text only"),
    ("（离线基线）", " (offline baseline)"),
)
_WORDS_EN = {
    **{"是": "yes", "否": "no", "全部": "all", "正向": "positive", "负向": "negative"},
    "医生小组": "physician panel",  # ``stats.raters.PANEL_RATER``
}

#: the pipeline's English notes on an unstreamed reply, in Chinese (their prefixes)
_NOTES_ZH = (
    ("not streamed: the offline baseline answers in process", "未流式：离线基线在进程内作答"),
    ("not streamed: stream is false in the model's config", "未流式：模型配置中 stream 为 false"),
    ("not streamed: the server refused a stream request", "未流式：服务端拒绝了流式请求"),
    ("not streamed: no time to first token was measured", "未流式：未测得首 token 时延"),
    ("not recorded", "未记录"),
    ("not streamed", "未流式（原因见 tables/latency.csv）"),
)


#: the figures' fixed Chinese texts (``figures.py``) in English
FIGURE_EN = {
    "图 3  数据集分布": "Fig. 3  Dataset distributions",
    "图 4a  总体得分": "Fig. 4a  Overall Score",
    "图 4b  正向 / 负向标准分解": "Fig. 4b  Positive / negative criteria",
    "图 5  有图与无图输入对比": "Fig. 5  With and without images",
    "图 6a  按专科大类的平均得分": "Fig. 6a  Score by specialty group",
    "图 6b  按患者意图": "Fig. 6b  By patient intent",
    "按问诊阶段": "By consultation stage",
    "图 7  单病例得分分布": "Fig. 7  Per-case score distribution",
    "图 11  得分与图片数量、对话轮数的关系": "Fig. 11  Score against image count and turns",
    "图 12  按亚专科的平均得分": "Fig. 12  Score by sub-specialty",
    "时延与质量": "Latency and quality",
    "回复时延中位数（秒，对数轴；横线至 90 百分位；空心点为首 token 时延中位数）": (
        "Median reply latency (s, log scale; bar to the 90th percentile; hollow point: "
        "median time to first token)"
    ),
    "单例得分": "Case score",
    "图片数量": "Images",
    "对话轮数": "Dialogue turns",
    "实例数": "Instances",
    "平均得分": "Mean score",
    "平均得分（0–100；颜色越淡，病例数 n 越少）": "Mean score (0-100; paler: fewer cases n)",
    "得分（0–100）": "Score (0-100)",
    "得分（0–100，误差线为 95% 置信区间）": "Score (0-100, bars: 95% CI)",
    "患者意图": "Patient intent",
    "问诊阶段": "Consultation stage",
    "有图": "images",
    "无图": "no images",
    "每例平均标准数（负向在左）": "Criteria per case (negative on the left)",
    "满足的正向标准": "positive criteria met",
    "触发的负向标准": "negative criteria triggered",
    "病例数": "Cases",
}


def figure_text(text: str) -> str:
    """A figure's text in English: its fixed texts by name, labels by their fragments."""
    if text in FIGURE_EN:
        return FIGURE_EN[text]
    text = cell_text(text, "en")
    return text.replace(" 秒", " s").replace("（", " (").replace("）", ")")


def humanize(identifier: str) -> str:
    """``paired_differences`` -> ``Paired differences``: the English name of last resort."""
    words = identifier.replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else identifier


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def heading(zh: str, table_names: tuple[str, ...], lang: Lang) -> str:
    if lang == "zh":
        return zh
    return SECTION_EN.get(zh) or "; ".join(humanize(n) for n in table_names)


def table_title(name: str, title: str, lang: Lang) -> str:
    """The stored title on a Chinese page; on an English one a title already in English
    (set by the builder), else the registered English title, else the spelled-out name."""
    if lang == "zh" or (title and not has_cjk(title)):
        return title
    return TITLE_EN.get(name) or humanize(name or "table")


def column(key: str, zh: str, lang: Lang) -> str:
    if lang == "zh":
        return zh
    return COLUMN_EN.get(key) or (zh if not has_cjk(zh) else humanize(key))


def caption(name: str, zh: str, lang: Lang) -> str:
    if lang == "zh":
        return zh
    return CAPTION_EN.get(name) or humanize(name)


def cell_text(text: str, lang: Lang) -> str:
    """A rendered cell in the page's language: row labels and yes/no words on an English
    page, the recorded English notes on a Chinese one; data (department names, ids) as is."""
    if lang == "en":
        if text in _WORDS_EN:
            return _WORDS_EN[text]
        for zh, en in (*_LABEL_EN, ("医生小组", "physician panel")):
            text = text.replace(zh, en)
        return text
    for en, zh in _NOTES_ZH:
        if text.startswith(en):
            return zh
    return text
