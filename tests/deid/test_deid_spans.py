"""``resolve_overlaps`` keeps what the pairwise rule keeps: longest first, then the more
specific type, then the earlier start; a span is kept if it overlaps no kept span."""

from __future__ import annotations

import random

import pytest

from medrealmm.deid.spans import _TYPE_RANK, EntityType, Span, resolve_overlaps


def _pairwise(spans: list[Span]) -> list[Span]:
    """The rule as first written: every candidate compared with every kept span."""
    chosen: list[Span] = []
    for span in sorted(spans, key=lambda s: (-s.length, _TYPE_RANK[s.type], s.start)):
        if not any(span.overlaps(kept) for kept in chosen):
            chosen.append(span)
    return sorted(chosen, key=lambda s: s.start)


def _random_spans(rng: random.Random, count: int, width: int) -> list[Span]:
    types = list(EntityType)
    out = []
    for _ in range(count):
        start = rng.randrange(width)
        end = start + rng.randint(1, 12)
        out.append(Span(start=start, end=end, type=rng.choice(types), text="x", source="t"))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_the_sweep_keeps_what_the_pairwise_rule_keeps(seed: int) -> None:
    rng = random.Random(seed)
    spans = _random_spans(rng, rng.randint(0, 120), rng.choice([10, 60, 400]))
    assert resolve_overlaps(spans) == _pairwise(spans)


def test_touching_spans_both_stay_and_the_result_is_sorted() -> None:
    a = Span(start=5, end=9, type=EntityType.PHONE, text="x", source="t")
    b = Span(start=0, end=5, type=EntityType.NAME, text="x", source="t")
    assert resolve_overlaps([a, b]) == [b, a]
