"""The offline baseline for the Phase 2 agents: keyword and image-position rules.

A deterministic baseline so the pipeline runs without a model, not a model: it answers with
the same JSON a model would, read from ``request.inputs``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from medrealmm.llm import ChatRequest
from medrealmm.mccp.agents import CROPPER_TASK, INTENT_TASK, STAGE_TASK, VERIFIER_TASK
from medrealmm.mccp.candidates import target_reply
from medrealmm.mccp.taxonomy import Taxonomy
from medrealmm.schema import Event, Sender

#: One keyword list per kind of clinical engagement the Cropper looks for (paper 3.2 (i)).
ENGAGEMENT_KEYWORDS: dict[str, tuple[str, ...]] = {
    "history_taking": ("请问", "有没有", "多久", "多大", "以前", "是否", "家里人", "病史"),
    "differential_diagnosis": ("考虑", "可能性", "诊断", "符合", "排除", "鉴别", "警惕"),
    "image_interpretation": (
        "从图片看",
        "图片显示",
        "报告显示",
        "化验单显示",
        "显示",
        "提示",
        "升高",
        "阳性",
        "偏高",
        "异常",
    ),
    "risk_stratification": ("就诊", "就医", "急诊", "风险", "立即", "及时"),
    "treatment_planning": ("建议", "治疗", "每日", "每次", "服用", "外用", "疗程", "剂量", "复查"),
    "patient_education": ("注意", "避免", "保持", "不要", "饮食", "不建议", "副作用"),
}
IMAGE_REFERENCE_WORDS = ("照片", "图片", "化验单", "报告", "片子", "看看", "看一下")


def _reply(payload: dict[str, object]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def engagement_kinds(reply: str) -> list[str]:
    return [kind for kind, words in ENGAGEMENT_KEYWORDS.items() if any(w in reply for w in words)]


def cropper_baseline(request: ChatRequest) -> str:
    """Score = share of engagement kinds the physician reply shows; none means not engaged."""
    reply = target_reply(request.inputs["events"], request.inputs["t"])
    kinds = engagement_kinds(reply)
    score = round(len(kinds) / len(ENGAGEMENT_KEYWORDS), 3)
    reason = f"回复涉及：{'、'.join(kinds)}" if kinds else "寒暄、确认或事务性回复"
    return _reply({"label": bool(kinds), "score": score, "reason": reason})


def verifier_baseline(request: ChatRequest) -> str:
    """Images matter most right after upload; each later patient message weakens the link."""
    events: Sequence[Event] = request.inputs["events"]
    image_turns = [i for i, event in enumerate(events) if event.patient_medical_images]
    if not image_turns:
        return _reply({"label": False, "score": 0.0, "reason": "截至此处患者未上传医学图片"})
    later_patient_turns = sum(
        1 for event in events[image_turns[-1] + 1 :] if event.sender is Sender.PATIENT
    )
    score = max(0.2, 1.0 - 0.2 * later_patient_turns)
    if any(word in events[-1].content for word in IMAGE_REFERENCE_WORDS):
        score = min(1.0, score + 0.1)
    score = round(score, 3)
    reason = f"最近一次上传图片后患者又发了{later_patient_turns}条消息"
    return _reply({"label": score >= 0.5, "score": score, "reason": reason})


def _keyword_label(taxonomy: Taxonomy, texts: Sequence[str]) -> str | None:
    """The label whose keywords hit most often; ties go to the earlier label in the file."""
    best, best_hits = None, 0
    for label in taxonomy.labels:
        hits = sum(text.count(word) for text in texts for word in label.keywords)
        if hits > best_hits:
            best, best_hits = label.id, hits
    return best


def labeler_baseline(request: ChatRequest) -> str:
    """Image upload in the last turn, then keywords of the last patient turn, then all of them."""
    events: Sequence[Event] = request.inputs["events"]
    taxonomy: Taxonomy = request.inputs["taxonomy"]
    last = events[-1]
    patient_texts = [event.content for event in events if event.sender is Sender.PATIENT]
    if taxonomy.baseline_image_label and last.patient_medical_images:
        label, reason = taxonomy.baseline_image_label, "最后一条患者消息上传了医学图片"
    elif found := _keyword_label(taxonomy, [last.content]):
        label, reason = found, "依据最后一条患者消息的关键词"
    elif found := _keyword_label(taxonomy, patient_texts):
        label, reason = found, "依据患者全部消息的关键词"
    else:
        label, reason = taxonomy.default, "无关键词命中，取默认类别"
    return _reply({"label": label, "reason": reason})


RULES = {
    CROPPER_TASK: cropper_baseline,
    VERIFIER_TASK: verifier_baseline,
    INTENT_TASK: labeler_baseline,
    STAGE_TASK: labeler_baseline,
}
