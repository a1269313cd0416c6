"""The report's dataset sections: statistics of paper 3.5 / Figure 3 and MCCP acceptance
(paper 6.3), read from the run store; kept apart from the score tables they sit beside."""

from __future__ import annotations

from medrealmm.mccp.validation import summarize_validation
from medrealmm.report.tables import Table
from medrealmm.rubric.rounds import rubric_digests
from medrealmm.stats.cases import instance_strata, withdrawn_consultations
from medrealmm.stats.dataset import dataset_statistics, value_counts
from medrealmm.store import RunStore

DATASET_TABLES = (
    *("dataset_overview", "dataset_distributions", "dataset_intents", "dataset_stages"),
)


def dataset_tables(store: RunStore) -> list[Table]:
    instances = list(instance_strata(store).values())  # the counts, not each dialogue
    rubrics = rubric_digests(store)
    stats = dataset_statistics(instances, rubrics)
    head = [
        {"quantity": "instances", "name": "MCCP 实例", "count": stats["instances"]},
        {"quantity": "consultations", "name": "问诊", "count": stats["consultations"]},
        {"quantity": "departments", "name": "科室", "count": stats["departments"]},
        {"quantity": "with_rubric", "name": "有量表的实例", "count": stats["with_rubric"]},
    ]
    gone = withdrawn_consultations(store)
    if gone:  # left out of every count above
        head.append({"quantity": "withdrawn", "name": "已撤回的问诊（不计）", "count": len(gone)})
    spread = [
        {
            "quantity": d["quantity"],
            "name": d["name"],
            "count": d["n"],
            "average": d["mean"],
            "median": d["median"],
            "min": d["min"],
            "max": d["max"],
        }
        for d in stats["distributions"]
    ]
    overview = Table(
        "dataset_overview",
        "数据集统计（论文 3.5、图 3）：每个实例的对话轮数、图片数、量表大小与正负向标准数",
        ("quantity", "name", "count", "average", "median", "min", "max"),
        [*head, *spread],
    )
    columns = ("label_id", "name", "cases", "share")
    intents = [{"label_id": r.pop("label"), **r} for r in stats["intents"]]
    stages_ = [{"label_id": r.pop("label"), **r} for r in stats["stages"]]
    counts = Table(
        "dataset_distributions",
        "数据集分布（图 3）：每个取值的实例数（对话轮数、图片数、量表大小、正负向标准数）",
        ("quantity", "name", "value", "cases"),
        value_counts(instances, rubrics),
    )
    return [
        overview,
        counts,
        Table("dataset_intents", "患者意图分布（图 3）", columns, intents),
        Table("dataset_stages", "问诊阶段分布（图 3）", columns, stages_),
    ]


def acceptance_table(store: RunStore) -> Table:
    """Per case over the drawn sample: accepted when every physician who judged it accepted."""
    summary = summarize_validation(store)
    row = {
        "sample": summary.sample_size,
        "decided": summary.decided,
        "accepted": summary.accepted,
        "rate": None if summary.rate is None else round(summary.rate, 4),
        "disagreements": summary.disagreements,
        "undecided": summary.undecided,
        "outside_sample": summary.outside_sample,
    }
    return Table(
        "mccp_acceptance",
        "MCCP 医生验证（论文 6.3）：按病例计，抽样内全部医生接受才算接受；医生意见不一致单列",
        tuple(row),
        [row],
    )


def usage_table(store: RunStore) -> Table:
    """Calls (cached, failed, requests sent), tokens and cost (YAML prices) by stage and model."""
    from medrealmm.evaluate.results import USAGE_COLUMNS, usage_with_cost

    rows = usage_with_cost(store)
    return Table(
        "usage",
        "模型调用、token 与费用（按阶段与模型；费用按模型配置中的单价）；"
        "unknown_prompt_calls：服务器未报告输入 token 数的调用（其输入 token 未计入，而非按 0 计）",
        USAGE_COLUMNS,
        rows,
    )
