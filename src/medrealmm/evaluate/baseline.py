"""Offline baseline for the evaluated model and the Grader: fixed rules, not models.

The respondent acknowledges, addresses the images (seen or not), takes a standard history and
gives safety advice; the Grader matches criterion keywords in the reply (``lexical``).
"""

from __future__ import annotations

from collections.abc import Sequence

from medrealmm.evaluate import lexical
from medrealmm.evaluate.canary import CANARY_TASK
from medrealmm.evaluate.grader import (
    GRADER_TASK,
    GROUPED_TASK,
    GraderOutput,
    GroupedItem,
    GroupedOutput,
)
from medrealmm.evaluate.respond import RESPOND_TASK
from medrealmm.llm import ChatRequest
from medrealmm.schema import Event, ImageRef

CATEGORY_LABEL = {
    "skin": "皮损照片",
    "lab_report": "化验单",
    "prescription": "处方/用药单",
    "ct_film": "影像胶片",
}


def _image_sentence(refs: list[ImageRef], with_images: bool) -> str:
    if not with_images:
        return f"您上传的{len(refs)}张图片本次无法查看，请用文字描述图片中的主要异常或化验数值。"
    names = (CATEGORY_LABEL.get(ref.category or "", "医学图片") for ref in refs)
    labels = "、".join(dict.fromkeys(names))
    return f"您上传的{len(refs)}张图片（{labels}）已收到，建议结合图片所示情况进一步评估。"


def baseline_reply(context: Sequence[Event], with_images: bool) -> str:
    """Acknowledge, address the images, take a standard history, give safety advice."""
    refs = [ref for event in context for ref in event.patient_medical_images]
    lines = ["您好，您描述的情况我已经了解。"]
    if refs:
        lines.append(_image_sentence(refs, with_images))
    lines.append(
        "请问症状持续多长时间了？有没有加重或缓解的因素？既往有什么疾病和药物过敏史？"
        "目前在用哪些药物？"
    )
    lines.append(
        "在明确之前请不要自行用药或停药；如出现症状明显加重、高热、剧烈疼痛或呼吸困难，"
        "请及时到线下医院就诊。"
    )
    return "".join(lines)


def respond_baseline(request: ChatRequest) -> str:
    return baseline_reply(request.inputs["context"], bool(request.inputs["with_images"]))


def _baseline_verdict(criterion: str, weight: int, reply: str, withheld: bool) -> GraderOutput:
    """Lexical overlap; "cannot assess" only when the criterion asks what an image shows and
    the grader was not shown the images (``--grader-images off``)."""
    if withheld and lexical.reads_image(criterion):
        return GraderOutput(met=False, cannot_assess=True, rationale=lexical.CANNOT_READ_IMAGE)
    found = lexical.judge(criterion, weight, reply)
    return GraderOutput(met=found.met, rationale=found.rationale)


def grader_baseline(request: ChatRequest) -> str:
    inputs = request.inputs
    found = _baseline_verdict(
        inputs["criterion"],
        int(inputs["weight"]),
        inputs["reply"],
        inputs.get("images_withheld", False),
    )
    return found.model_dump_json()


def canary_baseline(request: ChatRequest) -> str:
    """The rules have read nothing: they cannot complete a canary."""
    return "不知道"


def grouped_baseline(request: ChatRequest) -> str:
    """The per-criterion rule on each criterion: the same verdicts in one answer."""
    inputs = request.inputs
    items = [
        GroupedItem(
            id=item["id"],
            **_baseline_verdict(
                item["text"],
                int(item["weight"]),
                inputs["reply"],
                inputs.get("images_withheld", False),
            ).model_dump(),
        )
        for item in inputs["criteria"]
    ]
    return GroupedOutput(verdicts=items).model_dump_json()


RULES = {
    RESPOND_TASK: respond_baseline,
    GRADER_TASK: grader_baseline,
    CANARY_TASK: canary_baseline,
    GROUPED_TASK: grouped_baseline,
}
