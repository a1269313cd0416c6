"""Offline baseline for the Generator and Refiner: transparent rules, not a model.

Generator: each clause of y_orig is sorted into a clinical action (diagnosis, image reading,
medication, examination, safety-net, daily care, history taking) and becomes a positive
criterion; fixed negatives cover hallucination, contradiction, unsafe advice and ignoring
the images. Each criterion's axis follows from its action (a diagnosis or a dose is
accuracy, an image reading or a question about the history context awareness, a check-up,
safety-net or care advice completeness). Refiner: applies structured physician feedback
literally. Both return the JSON a model would, so the output goes through the same
validation.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from medrealmm.llm import ChatRequest
from medrealmm.rubric.agents import GENERATOR_TASK, REFINER_TASK
from medrealmm.rubric.drafts import GENERATOR_MAX, CriterionDraft, RefinedCriterion
from medrealmm.rubric.feedback import ADDING, FeedbackItem, FeedbackType
from medrealmm.schema.rubric import Axis


@dataclass(frozen=True)
class Action:
    name: str
    pattern: re.Pattern[str]
    template: str
    weight: int
    axis: Axis


#: First match wins, so the more specific actions come first.
ACTIONS: tuple[Action, ...] = (
    Action(
        "diagnosis",
        re.compile(r"考虑|诊断|符合|可能性大|提示|属于"),
        "给出与病情相符的初步判断：{}",
        8,
        Axis.ACCURACY,
    ),
    Action(
        "image",
        re.compile(r"图片|照片|从图|报告显示|化验单显示|片子|影像|单子上"),
        "结合患者上传的图片或报告作出具体解读：{}",
        7,
        Axis.CONTEXT_AWARENESS,
    ),
    Action(
        "safety",
        re.compile(r"就诊|就医|急诊|立即|及时|线下|停药|警惕"),
        "交代需要及时线下就医的警示情况：{}",
        6,
        Axis.COMPLETENESS,
    ),
    Action(
        "examination",
        re.compile(r"检查|复查|化验|筛查|镜检|B超|彩超|CT|核磁|拍片|监测|查[A-Za-z血尿便肝肾甲铁]"),
        "建议必要的检查或复查：{}",
        6,
        Axis.COMPLETENESS,
    ),
    Action(
        "medication",
        re.compile(
            r"\d+(?:mg|g|ml|毫克|克|片)|乳膏|软膏|胶囊|溶液|口服|外用|注射|用药|服用|服药|药物"
        ),
        "给出规范的用药建议（药物、用法与疗程）：{}",
        8,
        Axis.ACCURACY,
    ),
    Action(
        "care",
        re.compile(r"保持|避免|饮食|注意|休息|戒|多喝水|清洁|保湿|锻炼|运动|睡眠"),
        "给出日常护理与生活方式建议：{}",
        4,
        Axis.COMPLETENESS,
    ),
    Action(
        "history",
        re.compile(r"请问|有没有|是否|多久|[吗呢][？?]|[？?]"),
        "追问与判断相关的关键病史：{}",
        5,
        Axis.CONTEXT_AWARENESS,
    ),
)
PER_ACTION = 3
_CLAUSE = re.compile(r"[^。；;！!？?\n]+[？?]?")
_FILLER = re.compile(r"^(?:您好|你好|好的|嗯|那|另外|然后|所以|建议您?|考虑|请问)[，,、：:\s]*")

NEGATIVES: tuple[tuple[str, int, Axis], ...] = (
    ("编造对话或图片中没有的检查结果、病史或用药史", -8, Axis.ACCURACY),
    ("给出与患者已提供信息相矛盾的判断或建议", -6, Axis.CONTEXT_AWARENESS),
    ("给出不安全的建议，如超剂量用药、自行停用必要药物或延误急症就医", -10, Axis.ACCURACY),
)
IMAGE_NEGATIVE = (
    "未结合患者上传的图片作答，或对图片内容作出错误解读",
    -6,
    Axis.CONTEXT_AWARENESS,
)
FALLBACK_POSITIVES: tuple[tuple[str, int, Axis], ...] = (
    ("针对患者本轮提出的问题作出直接、明确的回应", 5, Axis.INSTRUCTION_FOLLOWING),
    ("表达清楚、通俗易懂，便于患者理解和执行", 2, Axis.COMMUNICATION),
)


def clauses(reply: str) -> list[str]:
    out = []
    for raw in _CLAUSE.findall(reply):
        text = raw.strip(" ，,、")
        while (stripped := _FILLER.sub("", text)) != text:
            text = stripped
        if len(text) >= 4:
            out.append(text)
    return out


def baseline_criteria(reference_reply: str, image_count: int) -> list[CriterionDraft]:
    negatives = list(NEGATIVES) + ([IMAGE_NEGATIVE] if image_count else [])
    room = GENERATOR_MAX - len(negatives)
    seen: dict[str, int] = {}
    positives: list[CriterionDraft] = []
    for clause in clauses(reference_reply):
        action = next((a for a in ACTIONS if a.pattern.search(clause)), None)
        if action is None or seen.get(action.name, 0) >= PER_ACTION or len(positives) >= room:
            continue
        weight = max(2, action.weight - 2 * seen.get(action.name, 0))
        seen[action.name] = seen.get(action.name, 0) + 1
        positives.append(
            CriterionDraft(text=action.template.format(clause), weight=weight, axis=action.axis)
        )
    for text, weight, axis in FALLBACK_POSITIVES:
        if len(positives) >= 2:
            break
        positives.append(CriterionDraft(text=text, weight=weight, axis=axis))
    return positives + [CriterionDraft(text=t, weight=w, axis=a) for t, w, a in negatives]


def generator_baseline(request: ChatRequest) -> str:
    drafts = baseline_criteria(
        request.inputs["reference_reply"], int(request.inputs.get("image_count", 0))
    )
    return json.dumps({"criteria": [d.model_dump(mode="json") for d in drafts]}, ensure_ascii=False)


def generalise(text: str) -> str:
    """Drop the part quoted from the online reply: the action stays, its wording goes."""
    head, sep, _ = text.partition("：")
    if sep and len(head) >= 4:
        return head
    return re.sub(r"（[^）]*）", "", text).strip() or text


def apply_feedback(
    criteria: list[dict[str, Any]], items: list[FeedbackItem]
) -> list[RefinedCriterion]:
    """Carry out each feedback item literally; untouched criteria pass through unchanged."""
    by_id = {c["id"]: c for c in criteria}
    weights = {c["id"]: c["weight"] for c in criteria}
    texts = {c["id"]: c["text"] for c in criteria}
    removed: set[str] = set()
    splits: dict[str, FeedbackItem] = {}
    for item in items:
        cid = item.criterion_id or ""
        if item.type is FeedbackType.WRONG_WEIGHT and item.weight is not None:
            weights[cid] = item.weight
        elif item.type is FeedbackType.REFERENCE_SPECIFIC:
            texts[cid] = item.text.strip() if item.text else generalise(texts[cid])
        elif item.type is FeedbackType.REMOVE_CRITERION:
            removed.add(cid)
        elif item.type is FeedbackType.SPLIT_CRITERION:
            splits[cid] = item
    out: list[RefinedCriterion] = []
    for cid in by_id:
        if cid in removed:
            continue
        if cid in splits:
            out += [
                RefinedCriterion(id=cid, text=p.text, weight=p.weight) for p in splits[cid].parts
            ]
            continue
        out.append(RefinedCriterion(id=cid, text=texts[cid], weight=weights[cid]))
    out += [
        RefinedCriterion(id=None, text=(i.text or "").strip(), weight=i.weight or 1)
        for i in items
        if i.type in ADDING
    ]
    return out


def refiner_baseline(request: ChatRequest) -> str:
    items = [FeedbackItem.model_validate(i) for i in request.inputs["feedback"]]
    refined = apply_feedback(request.inputs["criteria"], items)
    return json.dumps(
        {"criteria": [c.model_dump(mode="json") for c in refined]}, ensure_ascii=False
    )


RULES = {GENERATOR_TASK: generator_baseline, REFINER_TASK: refiner_baseline}
