"""The LLM pass (agent ``deid.text_llm``): a model reads the rule-masked dialogue and names
what the rules missed. It only ever sees text the rules have already masked.

The offline baseline is a second, independent rule set for identifiers that appear in
unconventional contexts (names after kinship words, nicknames, hospital short names,
chat-app accounts), so the offline pipeline exercises the same merge path a model does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.deid.names import NAME_STOP, SURNAME_RE
from medrealmm.deid.spans import EntityType, Span, words
from medrealmm.llm import (
    ChatRequest,
    LLMClient,
    StructuredResult,
    complete_structured,
    register_offline,
    render_messages,
)

TASK = "deid.text_llm"


class ProposedSpan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turn: int = Field(ge=0)
    text: str = Field(min_length=1)
    type: EntityType


class TextLLMOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spans: list[ProposedSpan] = Field(default_factory=list)


def build_request(masked_turns: Sequence[str]) -> ChatRequest:
    return ChatRequest(
        task=TASK,
        messages=render_messages("medrealmm.deid", "text_llm", turns=list(masked_turns)),
        inputs={"turns": list(masked_turns)},
    )


async def propose_spans(
    client: LLMClient, masked_turns: Sequence[str]
) -> StructuredResult[TextLLMOutput]:
    return await complete_structured(client, build_request(masked_turns), TextLLMOutput)


def locate(
    proposals: Sequence[ProposedSpan], texts: Sequence[str], taken: Sequence[list[Span]]
) -> list[list[Span]]:
    """Turn proposals (turn, text) into offsets in the original texts, skipping anything
    that overlaps a span already found, holds a placeholder, or is not in that turn."""
    added: list[list[Span]] = [[] for _ in texts]
    for proposal in proposals:
        if proposal.turn >= len(texts) or "[" in proposal.text:
            continue
        text = texts[proposal.turn]
        occupied = [*taken[proposal.turn], *added[proposal.turn]]
        for match in re.finditer(re.escape(proposal.text), text):
            span = Span(
                start=match.start(),
                end=match.end(),
                type=proposal.type,
                text=proposal.text,
                source="llm",
            )
            if not any(span.overlaps(other) for other in occupied):
                added[proposal.turn].append(span)
                occupied.append(span)
    return added


# -- offline baseline ------------------------------------------------------------------
_KIN = "|".join(
    words(
        "我妈妈 我妈 我爸爸 我爸 老公 老婆 爱人 丈夫 妻子 女儿 儿子 孩子 宝宝 奶奶 爷爷 外婆 姥姥 "
        "外公 姥爷 婆婆 公公 哥哥 姐姐 弟弟 妹妹 朋友 同事 你好 您好"
    )
)
_KIN_NAME_RE = re.compile(rf"(?:{_KIN})(?:叫|是)?(?P<name>{SURNAME_RE}[\u4e00-\u9fff]{{1,2}})")
_NICKNAME_RE = re.compile(r"(?:叫|喊|小名)(?P<name>[小阿老][\u4e00-\u9fff])(?=[，。,.!！？?\s]|$)")
_HOSPITAL_SHORT = words(
    "协和 华西 湘雅 瑞金 华山 齐鲁 同济 中山一院 北医三院 北大人民 301 浙一 浙二 湘雅二院 华西二院"
)
_HOSPITAL_SHORT_RE = re.compile(
    rf"(?:在|去|到|于)(?P<name>{'|'.join(sorted(_HOSPITAL_SHORT, key=len, reverse=True))})"
    r"(?=看|就诊|住院|检查|复查|做|开|挂|的)"
)
_ACCOUNT_RE = re.compile(
    r"(?:微信号?|vx|VX|wx|WX|QQ|qq)\s*(?:号)?\s*[:：是为]?\s*(?P<name>[A-Za-z0-9][-_A-Za-z0-9]{4,19})"
)


def _clean_name(name: str) -> str:
    for i, char in enumerate(name[1:], start=1):
        if char in NAME_STOP:
            return name[:i]
    return name


@register_offline(TASK)
def offline_text_llm(request: ChatRequest) -> str:
    spans: list[dict[str, object]] = []
    for turn, text in enumerate(request.inputs.get("turns", [])):
        for match in _KIN_NAME_RE.finditer(text):
            name = _clean_name(match.group("name"))
            if len(name) >= 2:
                spans.append({"turn": turn, "text": name, "type": "NAME"})
        for match in _NICKNAME_RE.finditer(text):
            spans.append({"turn": turn, "text": match.group("name"), "type": "NAME"})
        for match in _HOSPITAL_SHORT_RE.finditer(text):
            spans.append({"turn": turn, "text": match.group("name"), "type": "HOSPITAL"})
        for match in _ACCOUNT_RE.finditer(text):
            spans.append({"turn": turn, "text": match.group("name"), "type": "ID"})
    return json.dumps({"spans": spans}, ensure_ascii=False)
