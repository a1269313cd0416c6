"""De-identify a consultation's text: rules, then the LLM pass, then cross-turn consistency,
then each masked entity's derived forms (``propagate``)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from medrealmm.deid.llm_pass import locate, propose_spans
from medrealmm.deid.propagate import propagate
from medrealmm.deid.spans import Span, apply_placeholders, resolve_overlaps
from medrealmm.deid.split_numbers import split_numbers
from medrealmm.deid.text import make_consistent, screen_proposals, screen_spans_in
from medrealmm.llm import Completion, LLMClient


@dataclass
class TextOutcome:
    spans: list[list[Span]]
    masked: list[str]
    llm_ok: bool | None = None
    llm_error: str | None = None
    completions: list[Completion] = field(default_factory=list)
    #: Requests the LLM pass took when it failed for good (0: it did not); usage counts them.
    failed_attempts: int = 0
    #: Per turn, the spans a veto class dropped, with the class: the reviewer's near-misses.
    vetoed: list[list[tuple[Span, str]]] = field(default_factory=list)


async def deid_turns(
    texts: Sequence[str],
    client: LLMClient | None = None,
    speakers: Sequence[Hashable] | None = None,
) -> TextOutcome:
    """Mask every turn; with a client, the LLM pass adds what the rules missed; then every
    entity found is masked in all its forms across the turns (``propagate``).

    ``speakers`` (one value per turn, e.g. each event's sender) lets a number split over two
    turns of one speaker be joined (``split_numbers``); without it, each turn and the next.
    A failed LLM pass is recorded, never fatal: the rule masking still applies.
    """
    screened = screen_spans_in(texts)
    halves = split_numbers(texts, speakers)
    spans = [
        resolve_overlaps([*kept, *half]) for (kept, _), half in zip(screened, halves, strict=True)
    ]
    outcome = TextOutcome(spans=spans, masked=[], vetoed=[dropped for _, dropped in screened])
    if client is not None:
        rule_masked = [apply_placeholders(t, s) for t, s in zip(texts, spans, strict=True)]
        result = await propose_spans(client, rule_masked)
        outcome.completions = result.completions
        outcome.failed_attempts = result.failed_attempts
        outcome.llm_ok = result.ok
        outcome.llm_error = result.error
        if result.value is not None:
            proposed = locate(result.value.spans, texts, spans)
            extra = [screen_proposals(t, p) for t, p in zip(texts, proposed, strict=True)]
            spans = [resolve_overlaps([*a, *b]) for a, (b, _) in zip(spans, extra, strict=True)]
            outcome.vetoed = [[*v, *d] for v, (_, d) in zip(outcome.vetoed, extra, strict=True)]
    spans = make_consistent(texts, spans)
    derived = propagate(texts, spans)
    outcome.spans = [resolve_overlaps([*a, *b]) for a, b in zip(spans, derived, strict=True)]
    outcome.masked = [apply_placeholders(t, s) for t, s in zip(texts, outcome.spans, strict=True)]
    return outcome
