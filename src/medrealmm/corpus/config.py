"""Every threshold of corpus construction in one validated, YAML-loadable object.

The defaults are the paper's rules (appendix 6.1); a run records the config it used in its
manifest so a corpus can be rebuilt exactly.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from medrealmm.io.errors import DataError
from medrealmm.io.yamlfile import compose_yaml, load_yaml

REFUND_KEYWORDS = ("退款", "退费", "退钱", "取消问诊", "取消订单", "取消咨询", "不问了", "撤销")
# A physician message naming any of these is about the order, not the patient's problem.
ADMINISTRATIVE_KEYWORDS = ("退款", "退费", "退钱", "客服", "取消", "订单", "撤销", "平台")
# Courtesy and stalling that carry no clinical content; stripped before a reply's length is judged.
COURTESY_PHRASES = (
    "前面患者较多",
    "患者较多",
    "为您解答",
    "我看一下",
    "看一下",
    "抱歉",
    "不好意思",
    "您好",
    "你好",
    "请稍等",
    "稍等",
    "马上",
    "在的",
    "收到",
    "好的",
    "谢谢",
    "不客气",
    "很高兴为您服务",
    "请问有什么可以帮您",
    "请详细描述",
    "怎么了",
)
PRIVACY_CATEGORIES = ("face_photo", "full_face", "face")
HIGH_SENSITIVITY = {
    "pediatrics": ("儿科", "小儿", "儿童", "新生儿"),
    "mental_health": ("精神", "心理"),
    "reproductive_health": ("妇产", "妇科", "产科", "生殖", "男科", "计划生育"),
    "oncology": ("肿瘤", "癌"),
    "infectious_disease": ("感染", "传染", "肝病", "性病"),
}


class CompletenessConfig(BaseModel):
    """Φ_cmpl: turns in [min, max], length <= max_chars, no dominant side, no refund close.

    Side balance is a ratio, not the paper's literal "more than half": read literally, every
    odd-length dialogue would go (docs/CHOICES.md).
    """

    model_config = ConfigDict(extra="forbid")

    min_turns: int = Field(default=5, ge=1)
    max_turns: int = Field(default=30, ge=1)
    max_chars: int = Field(default=4000, ge=1)
    max_side_ratio: float = Field(
        default=2.0,
        ge=1,
        description="Drop when one side sends more than this many times the other side's "
        "messages (2.0 keeps any alternating dialogue; a side with none is always dominated).",
    )
    refund_keywords: list[str] = Field(default_factory=lambda: list(REFUND_KEYWORDS))
    refund_tail_messages: int = Field(
        default=2, ge=1, description="How many of the patient's last messages can close a case."
    )
    administrative_keywords: list[str] = Field(
        default_factory=lambda: list(ADMINISTRATIVE_KEYWORDS),
        description="A physician message with any of these is never a substantive reply.",
    )
    courtesy_phrases: list[str] = Field(default_factory=lambda: list(COURTESY_PHRASES))
    substantive_min_chars: int = Field(
        default=8,
        ge=1,
        description="Characters a physician message keeps, courtesy and punctuation removed, "
        "to count as a substantive reply.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> CompletenessConfig:
        if self.min_turns > self.max_turns:
            raise ValueError("min_turns must not exceed max_turns")
        return self


class BalanceConfig(BaseModel):
    """Φ_bal: cap high-volume departments, optionally top the long tail up with replacement."""

    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    cap: int | None = Field(default=None, ge=1, description="Most cases kept per department.")
    target_total: int | None = Field(
        default=None, ge=1, description="Derive the cap so the corpus has about this many cases."
    )
    min_per_department: int = Field(default=0, ge=0)
    with_replacement: bool = Field(
        default=False, description="Oversample departments below the floor by drawing copies."
    )

    @model_validator(mode="after")
    def _one_cap(self) -> BalanceConfig:
        if self.cap is not None and self.target_total is not None:
            raise ValueError("give either cap or target_total, not both")
        if self.cap is not None and self.min_per_department > self.cap:
            raise ValueError("min_per_department must not exceed cap")
        return self


class PrivacyConfig(BaseModel):
    """Stage 4a: remove cases whose clinical signal is identifying visual content."""

    model_config = ConfigDict(extra="forbid")

    categories: list[str] = Field(
        default_factory=lambda: list(PRIVACY_CATEGORIES),
        description="Patient image categories that always make a case privacy-incompatible.",
    )
    model: str | None = Field(
        default="offline", description="Screening agent model; None runs the rule only."
    )


class ReviewConfig(BaseModel):
    """Φ_rev: high-sensitivity departments reviewed in full; seeded audit sample."""

    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    audit_fraction: float = Field(default=0.1, ge=0, le=1)
    high_sensitivity: dict[str, list[str]] = Field(
        default_factory=lambda: {k: list(v) for k, v in HIGH_SENSITIVITY.items()},
        description="Group name -> department-name fragments that put a case in that group.",
    )

    def sensitivity_group(self, department: str) -> str | None:
        for group, fragments in self.high_sensitivity.items():
            if any(fragment in department for fragment in fragments):
                return group
        return None


class CorpusConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    completeness: CompletenessConfig = Field(default_factory=CompletenessConfig)
    balance: BalanceConfig = Field(default_factory=BalanceConfig)
    privacy: PrivacyConfig = Field(default_factory=PrivacyConfig)
    review: ReviewConfig = Field(default_factory=ReviewConfig)


def load_config(path: Path | str | None) -> CorpusConfig:
    """The defaults, or a YAML file; a bad entry names the file and field."""
    if path is None:
        return CorpusConfig()
    path = Path(path)
    data = load_yaml(path) or {}
    try:
        return CorpusConfig.model_validate(data)
    except ValidationError as exc:
        loc = exc.errors()[0]["loc"]
        error = DataError.from_validation(path, yaml_line(path, loc), exc)
        raise error from None


def yaml_line(path: Path, loc: tuple[int | str, ...]) -> int:
    """1-based line of the deepest YAML node on ``loc`` (where the user must look)."""
    node = compose_yaml(path)
    line = 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = [v for k, v in node.value if k.value == part]
            node = match[0] if match else None
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            node = node.value[part] if part < len(node.value) else None
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return line
