"""Offline baseline for the corpus privacy screen (4a): a keyword rule, not a model."""

from __future__ import annotations

from medrealmm.corpus.privacy_agent import TASK, PrivacyScreen
from medrealmm.llm import ChatRequest

# Words by which a patient says the image shows the face; the baseline's only signal.
FACE_WORDS = ("正脸", "面部", "脸部", "脸上", "脸颊", "五官", "整张脸")


def privacy_screen_baseline(request: ChatRequest) -> str:
    """Remove a case when the patient says an uploaded image shows the face."""
    messages: list[str] = request.inputs.get("image_messages", [])
    hits = [word for text in messages for word in FACE_WORDS if word in text]
    if hits:
        reason = f"患者上传图片时提到“{hits[0]}”，诊断依赖面部可识别信息"
        return PrivacyScreen(remove=True, reason=reason).model_dump_json()
    return PrivacyScreen(remove=False, reason="图片遮盖标识后临床信息仍可保留").model_dump_json()


RULES = {TASK: privacy_screen_baseline}
