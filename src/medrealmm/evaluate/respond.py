"""The evaluated model's turn: y ~ p_M(. | x), with patient images inline or withheld.

One prompt for every model (paper 7.1: no per-model prompt tricks); per-model decoding comes
from the model spec. Sample i > 0 carries its own seed so k samples are k distinct calls.
"""

from __future__ import annotations

from collections.abc import Sequence

from medrealmm.evaluate.messages import messages_with_parts
from medrealmm.llm import ChatRequest, GenerationParams, register_offline
from medrealmm.llm.types import Part
from medrealmm.schema import Event, ImageRef

PACKAGE = "medrealmm.evaluate"
RESPOND_TASK = "evaluate.respond"

CATEGORY_LABEL = {
    "skin": "皮损照片",
    "lab_report": "化验单",
    "prescription": "处方/用药单",
    "ct_film": "影像胶片",
}


def sample_params(sample: int, base_seed: int | None) -> GenerationParams:
    """Only the seed is set, and only for samples after the first: everything else (and
    sample 0's seed) comes from the model spec, so each of k samples is its own call."""
    return GenerationParams(seed=(base_seed or 0) + sample) if sample else GenerationParams()


def respond_request(
    *,
    department: str,
    context: Sequence[Event],
    parts: list[Part],
    with_images: bool,
    sample: int = 0,
    base_seed: int | None = None,
) -> ChatRequest:
    """The physician-reply request; ``parts`` is ``dialogue_parts(context, ...)``."""
    return ChatRequest(
        task=RESPOND_TASK,
        messages=messages_with_parts(
            PACKAGE, "respond", slot="dialogue", parts=parts, department=department
        ),
        params=sample_params(sample, base_seed),
        inputs={"context": list(context), "with_images": with_images},
    )


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


@register_offline(RESPOND_TASK)
def _offline_respond(request: ChatRequest) -> str:
    return baseline_reply(request.inputs["context"], bool(request.inputs["with_images"]))
