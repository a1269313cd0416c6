"""The offline grader baseline's rule: character-bigram overlap between criterion and reply.

Transparent on purpose: it reads no meaning, only whether a criterion's content words show up
in the reply. Negative criteria describe an error: an omission ("未提及X") is triggered when X
is missing; a commission ("建议自行停药") when its words appear in a sentence without negation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

THRESHOLD = 0.4
OMISSION_THRESHOLD = 0.2  # an omission is triggered only when its content is all but absent

# Words that frame a criterion rather than carry its content.
FRAMING = (
    "回复中",
    "回复",
    "医生",
    "患者",
    "是否",
    "应当",
    "应该",
    "需要",
    "明确",
    "能够",
    "给出",
    "提供",
    "说明",
    "提及",
    "提到",
    "指出",
)
STOP_CHARS = set("的了是在和与或及并等应对其将把被给向从也都就还很为之于以该此这那")
OMISSION_CUES = ("未能", "未", "没有", "遗漏", "忽略", "缺少", "缺乏")
NEGATION_CUES = ("不建议", "不要", "不需", "无需", "不必", "避免", "切勿", "禁止", "勿", "不")
_SENTENCE = re.compile(r"[。！？!?；;\n]+")
_CLAUSE = re.compile(r"[，,；;：:]|或")
_RUN = re.compile(r"[0-9A-Za-z\u4e00-\u9fff]+")
#: A criterion about what an image shows: an image word and a reading word in one clause.
_READS_IMAGE = re.compile(
    r"(图片|照片|影像|片子|胶片)[^，,；;。]*(解读|所示|显示|内容|识别)"
    r"|(解读|识别)[^，,；;。]*(图片|照片|影像|片子|胶片)"
)
CANNOT_READ_IMAGE = "离线基线（规则，非模型）：该准则需要看图判断，本次评分未提供图片，无法评估。"


def content_bigrams(text: str) -> set[str]:
    for word in FRAMING:
        text = text.replace(word, " ")
    text = "".join(" " if ch in STOP_CHARS else ch for ch in text)
    grams: set[str] = set()
    for run in _RUN.findall(text.lower()):
        if len(run) == 1:
            grams.add(run)
        grams.update(run[i : i + 2] for i in range(len(run) - 1))
    return grams


def coverage(needle: set[str], text: str) -> float:
    if not needle:
        return 0.0
    return len(needle & content_bigrams(text)) / len(needle)


def reads_image(criterion: str) -> bool:
    """Whether judging ``criterion`` needs the image itself, not only the reply's words: it
    asks for a reading of an image. An omission ("未结合图片作答…") is judged from the reply."""
    return _READS_IMAGE.search(criterion) is not None and _strip_omission(criterion) is None


@dataclass(frozen=True)
class LexicalVerdict:
    met: bool
    rationale: str


def _strip_omission(criterion: str) -> str | None:
    """The omitted content when the criterion names an omission, else None."""
    body = criterion.strip()
    for framing in ("回复中", "回复", "医生"):
        if body.startswith(framing):
            body = body[len(framing) :]
    for cue in OMISSION_CUES:
        if body.startswith(cue):
            return _CLAUSE.split(body[len(cue) :])[0]  # "未结合图片作答，或…": the first clause
    return None


def judge(criterion: str, weight: int, reply: str, threshold: float = THRESHOLD) -> LexicalVerdict:
    prefix = "离线基线（词汇重叠规则，非模型）："
    if weight > 0:
        score = coverage(content_bigrams(criterion), reply)
        met = score >= threshold
        return LexicalVerdict(met, f"{prefix}准则内容覆盖率 {score:.2f}，阈值 {threshold}。")
    omitted = _strip_omission(criterion)
    if omitted is not None:
        score = coverage(content_bigrams(omitted), reply)
        met = score < OMISSION_THRESHOLD
        return LexicalVerdict(
            met, f"{prefix}遗漏类扣分项，被遗漏内容覆盖率 {score:.2f}，阈值 {OMISSION_THRESHOLD}。"
        )
    needle = content_bigrams(criterion)
    sentences = [s for s in _SENTENCE.split(reply) if s.strip()] or [reply]
    best = max(sentences, key=lambda s: coverage(needle, s))
    score = coverage(needle, best)
    negated = any(cue in best and cue not in criterion for cue in NEGATION_CUES)
    met = score >= threshold and not negated
    note = "，该句含否定词" if negated else ""
    return LexicalVerdict(
        met, f"{prefix}扣分项，最相近句子覆盖率 {score:.2f}，阈值 {threshold}{note}。"
    )
