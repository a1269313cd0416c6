"""Stage 4a by agent: does masking the patient's identifying visual content destroy the
clinical signal? Runs on any OpenAI-compatible model or on the offline baseline.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.llm import (
    ChatRequest,
    LLMClient,
    StructuredResult,
    complete_structured,
    dialogue_messages,
    dialogue_parts,
)
from medrealmm.schema import Consultation, Sender

TASK = "corpus.privacy_screen"


class PrivacyScreen(BaseModel):
    model_config = ConfigDict(extra="forbid")

    remove: bool
    reason: str = Field(default="", max_length=500)


def screen_request(
    consultation: Consultation, image_root: Path | None = None, *, pixels: bool = True
) -> ChatRequest:
    """The screening prompt; with ``image_root`` the images are inline in the dialogue (as
    file references when ``pixels`` is False: a client that never reads them)."""
    categories = sorted({ref.category or "未标注" for ref in consultation.patient_medical_images})
    image_messages = [
        event.content
        for event in consultation.events
        if event.sender is Sender.PATIENT and event.patient_medical_images
    ]
    messages = dialogue_messages(
        "medrealmm.corpus",
        "privacy_screen",
        dialogue_parts(consultation.events, image_root=image_root, pixels=pixels),
        department=consultation.department,
        categories=categories,
    )
    return ChatRequest(
        task=TASK,
        messages=messages,
        inputs={"categories": categories, "image_messages": image_messages},
    )


async def screen_privacy(
    client: LLMClient, consultation: Consultation, image_root: Path | None = None
) -> StructuredResult[PrivacyScreen]:
    request = screen_request(consultation, image_root, pixels=client.reads_pixels)
    return await complete_structured(client, request, PrivacyScreen)
