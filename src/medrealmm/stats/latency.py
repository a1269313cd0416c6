"""Latency beside quality (the paper leaves it out, 4.1): how fast each model replied and how
many of its replies came within the ~20 s an online physician is expected to answer in.

Only generated replies carry a measurement (``Response.latency``); imported replies, the
Online anchor and failed calls do not. Time to first token exists only for streamed replies;
each reply without it says why (``first_token_note``), and the summary keeps the commonest
reason. Latency never changes a score.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from medrealmm.schema import PHYSICIAN_REPLY_S, ReplyLatency, Response


@dataclass(frozen=True)
class LatencySummary:
    model: str
    images: bool
    replies: int  # replies with a measurement
    median_s: float
    p90_s: float
    within_physician_time: float  # share of replies in <= PHYSICIAN_REPLY_S
    median_first_token_s: float | None  # None: no reply was streamed
    p90_first_token_s: float | None
    streamed: int  # replies with a time to first token
    first_token_note: str | None  # the commonest reason a reply has none; None: all have it
    median_tokens_per_s: float | None
    endpoints: tuple[str, ...]
    concurrency: tuple[int, ...]


def summarize_latency(responses: Iterable[Response]) -> list[LatencySummary]:
    """One row per (model, images) over its measured replies, every sample counted."""
    return summarize_measured(
        (response.model, response.images, response.latency)
        for response in responses
        if response.latency is not None and response.text is not None
    )


def summarize_measured(replies: Iterable[tuple[str, bool, ReplyLatency]]) -> list[LatencySummary]:
    """``summarize_latency`` of the measured replies alone, as (model, images, latency): a
    large run's replies need not be built to find the few that carry a measurement."""
    groups: dict[tuple[str, bool], list[ReplyLatency]] = defaultdict(list)
    for model, images, latency in replies:
        groups[(model, images)].append(latency)
    rows = []
    for (model, images), measured in sorted(groups.items()):
        totals = np.array([m.total_s for m in measured])
        first = [m.first_token_s for m in measured if m.first_token_s is not None]
        rates = [m.tokens_per_s for m in measured if m.tokens_per_s is not None]
        notes = Counter(
            m.first_token_note or "not recorded" for m in measured if m.first_token_s is None
        )
        rows.append(
            LatencySummary(
                model=model,
                images=images,
                replies=len(measured),
                median_s=float(np.median(totals)),
                p90_s=float(np.quantile(totals, 0.9)),
                within_physician_time=float(np.mean(totals <= PHYSICIAN_REPLY_S)),
                median_first_token_s=float(np.median(first)) if first else None,
                p90_first_token_s=float(np.quantile(first, 0.9)) if first else None,
                streamed=len(first),
                first_token_note=notes.most_common(1)[0][0] if notes else None,
                median_tokens_per_s=float(np.median(rates)) if rates else None,
                endpoints=tuple(sorted({m.endpoint or "offline" for m in measured})),
                concurrency=tuple(sorted({m.concurrency for m in measured})),
            )
        )
    return rows
