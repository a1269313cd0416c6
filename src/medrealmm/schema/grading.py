"""Per-criterion verdicts and per-case scores (paper 3.4)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator


class VerdictStatus(StrEnum):
    OK = "ok"
    FAILED = "failed"
    #: The grader answered "cannot assess" (an unreadable image, missing context): a finished
    #: judgement without a value, scored by the run's abstain policy. Never a failed call.
    ABSTAINED = "abstained"


class Verdict(BaseModel):
    """(v_j, r_j) for one criterion; a failed or abstained verdict has no value, and a failed
    one is never counted as 0 (an abstained one counts as its run's abstain policy says)."""

    model_config = ConfigDict(extra="forbid")

    criterion_id: str
    value: bool | None
    rationale: str = ""
    status: VerdictStatus = VerdictStatus.OK
    grader: str = ""
    error: str | None = None
    eval_id: str | None = Field(default=None, description="Its evaluation (EvalSpec).")
    rubric_version: str | None = Field(default=None, description="Rubric.version graded against.")
    criterion_version: str | None = Field(default=None, description="Criterion.version judged.")
    grader_images: bool | None = Field(
        default=None, description="Whether the grader saw the images (None: not recorded)."
    )

    @model_validator(mode="after")
    def _value_iff_ok(self) -> Verdict:
        if (self.status is VerdictStatus.OK) != (self.value is not None):
            raise ValueError("an ok verdict carries a value; a failed or abstained one none")
        return self


#: The paper's expectation of an online physician (4.1): a reply within roughly 20 seconds.
PHYSICIAN_REPLY_S = 20.0


class ReplyLatency(BaseModel):
    """How fast a reply came, as measured when it was generated (a reply answered from the
    cache keeps its first measurement). It never changes a score."""

    model_config = ConfigDict(extra="forbid")

    total_s: float = Field(
        ge=0.0,
        description="Request sent to the reply's last byte, for the request that answered "
        "(earlier failed attempts and their backoff are not counted).",
    )
    first_token_s: float | None = Field(
        default=None, ge=0.0, description="Time to first token; None: the reply was not streamed."
    )
    first_token_note: str | None = Field(
        default=None,
        description="Why first_token_s is None (stream off in the config, the server refused "
        "streaming, the offline baseline); None when it was measured.",
    )
    output_tokens: int = Field(default=0, ge=0)
    endpoint: str = Field(default="", description="Host the reply came from ('' offline).")
    concurrency: int = Field(default=1, ge=1, description="Calls in flight allowed meanwhile.")

    @property
    def tokens_per_s(self) -> float | None:
        return self.output_tokens / self.total_s if self.total_s > 0 else None

    @property
    def within_physician_time(self) -> bool:
        return self.total_s <= PHYSICIAN_REPLY_S


class Response(BaseModel):
    """One model answer y to an instance; ``text`` is None when generation failed."""

    model_config = ConfigDict(extra="forbid")

    instance_id: str
    model: str
    images: bool = True
    sample: int = Field(default=0, ge=0)
    text: str | None = None
    status: VerdictStatus = VerdictStatus.OK
    error: str | None = None
    is_baseline: bool = False
    eval_id: str | None = Field(default=None, description="Its evaluation (EvalSpec).")
    truncated: bool = Field(
        default=False, description="Cut at max_tokens; graded as written (it is the reply)."
    )
    latency: ReplyLatency | None = Field(
        default=None, description="Generated replies only; never part of the score."
    )
    refused: bool = Field(
        default=False,
        description="The model declined (the server's refusal field or content filter): "
        "scored 0 without grading, counted as a refusal.",
    )


class CaseScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    instance_id: str
    model: str
    sample: int = Field(default=0, ge=0)
    images: bool = True
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    complete: bool = True
    positive_points_met: int = 0
    positive_points_total: int = 0
    positive_met: int = 0
    negative_triggered: int = 0
    failed_criteria: list[str] = Field(default_factory=list)
    abstained_criteria: list[str] = Field(
        default_factory=list, description="Criteria the grader could not assess."
    )
    verdicts: list[Verdict] = Field(default_factory=list)
    rubric_approved: bool = Field(
        default=True, description="False when scored against a rubric round not yet approved."
    )
    eval_id: str | None = Field(default=None, description="Its evaluation (EvalSpec).")
    rubric_version: str | None = Field(default=None, description="Rubric.version scored against.")
    refused: bool = Field(default=False, description="The reply was a refusal: scored 0.")

    @property
    def abstained(self) -> int:
        return len(self.abstained_criteria)

    @model_validator(mode="after")
    def _score_iff_complete(self) -> CaseScore:
        if self.complete != (self.score is not None):
            raise ValueError("a complete case has a score; an incomplete one has none")
        return self
