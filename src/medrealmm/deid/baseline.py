"""Offline baseline for the de-identification LLM pass: a second, independent rule set.

It looks for identifiers in unconventional contexts (names after kinship words, nicknames,
chat-app accounts), so the offline pipeline exercises the same merge
path a model's proposals take. Rules, not a model.
"""

from __future__ import annotations

import json
import re

from medrealmm.deid.llm_pass import TASK
from medrealmm.deid.names import NAME_STOP, SURNAME_RE
from medrealmm.deid.spans import words
from medrealmm.llm import ChatRequest

_KIN = "|".join(
    words(
        "我妈妈 我妈 我爸爸 我爸 老公 老婆 爱人 丈夫 妻子 女儿 儿子 孩子 宝宝 奶奶 爷爷 外婆 姥姥 "
        "外公 姥爷 婆婆 公公 哥哥 姐姐 弟弟 妹妹 朋友 同事 你好 您好"
    )
)
_KIN_NAME_RE = re.compile(rf"(?:{_KIN})(?:叫|是)?(?P<name>{SURNAME_RE}[\u4e00-\u9fff]{{1,2}})")
_NICKNAME_RE = re.compile(r"(?:叫|喊|小名)(?P<name>[小阿老][\u4e00-\u9fff])(?=[，。,.!！？?\s]|$)")
_ACCOUNT_RE = re.compile(
    r"(?:微信号?|vx|VX|wx|WX|QQ|qq)\s*(?:号)?\s*[:：是为]?\s*(?P<name>[A-Za-z0-9][-_A-Za-z0-9]{4,19})"
)


def _clean_name(name: str) -> str:
    for i, char in enumerate(name[1:], start=1):
        if char in NAME_STOP:
            return name[:i]
    return name


def text_llm_baseline(request: ChatRequest) -> str:
    """Identifiers in unconventional contexts that the first rule pass does not look for."""
    spans: list[dict[str, object]] = []
    for turn, text in enumerate(request.inputs.get("turns", [])):
        for match in _KIN_NAME_RE.finditer(text):
            name = _clean_name(match.group("name"))
            if len(name) >= 2:
                spans.append({"turn": turn, "text": name, "type": "NAME"})
        for match in _NICKNAME_RE.finditer(text):
            spans.append({"turn": turn, "text": match.group("name"), "type": "NAME"})
        for match in _ACCOUNT_RE.finditer(text):
            spans.append({"turn": turn, "text": match.group("name"), "type": "ID"})
    return json.dumps({"spans": spans}, ensure_ascii=False)


RULES = {TASK: text_llm_baseline}
