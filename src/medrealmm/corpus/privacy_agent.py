"""Stage 4a by agent: does masking the patient's identifying visual content destroy the
clinical signal? Runs on any OpenAI-compatible model or on the offline baseline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.io import image_data_url, resolve_image
from medrealmm.llm import (
    ChatRequest,
    ImagePart,
    LLMClient,
    StructuredResult,
    complete_structured,
    dialogue_text,
    register_offline,
    render_messages,
)
from medrealmm.schema import Consultation, Sender

TASK = "corpus.privacy_screen"

# Words by which a patient says the image shows the face; the baseline's only signal.
FACE_WORDS = ("正脸", "面部", "脸部", "脸上", "脸颊", "五官", "整张脸")


class PrivacyScreen(BaseModel):
    model_config = ConfigDict(extra="forbid")

    remove: bool
    reason: str = Field(default="", max_length=500)


def screen_request(consultation: Consultation, image_root: Path | None = None) -> ChatRequest:
    """The screening prompt; with ``image_root`` the patient's images follow it inline."""
    categories = sorted({ref.category or "未标注" for ref in consultation.patient_medical_images})
    image_messages = [
        event.content
        for event in consultation.events
        if event.sender is Sender.PATIENT and event.patient_medical_images
    ]
    messages = render_messages(
        "medrealmm.corpus",
        "privacy_screen",
        department=consultation.department,
        categories=categories,
        dialogue=dialogue_text(consultation.events),
    )
    if image_root is not None:
        images = [
            ImagePart(url=image_data_url(resolve_image(image_root, ref)))
            for ref in consultation.patient_medical_images
        ]
        user = messages[-1]
        messages[-1] = user.model_copy(update={"content": [*user.content, *images]})
    return ChatRequest(
        task=TASK,
        messages=messages,
        inputs={"categories": categories, "image_messages": image_messages},
    )


async def screen_privacy(
    client: LLMClient, consultation: Consultation, image_root: Path | None = None
) -> StructuredResult[PrivacyScreen]:
    request = screen_request(consultation, image_root)
    return await complete_structured(client, request, PrivacyScreen)


@register_offline(TASK)
def _offline_screen(request: ChatRequest) -> str:
    """Baseline rule: the patient says an uploaded image shows the face."""
    inputs: dict[str, Any] = request.inputs
    hits = [
        word for text in inputs.get("image_messages", []) for word in FACE_WORDS if word in text
    ]
    if hits:
        reason = f"患者上传图片时提到“{hits[0]}”，诊断依赖面部可识别信息"
        return PrivacyScreen(remove=True, reason=reason).model_dump_json()
    return PrivacyScreen(remove=False, reason="图片遮盖标识后临床信息仍可保留").model_dump_json()
