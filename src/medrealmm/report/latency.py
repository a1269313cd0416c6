"""The report's latency view: a table per model and the quality-vs-latency figure with the
paper's 20 s line (an online physician's expected reply time). Time to first token (median and
90th percentile) stands beside the total for streamed replies; where replies were not
streamed, the table says why instead of leaving the column silently empty."""

from __future__ import annotations

from collections.abc import Iterator

from medrealmm.llm import OFFLINE_NAME
from medrealmm.report.tables import Table, condition_label
from medrealmm.schema import PHYSICIAN_REPLY_S, ReplyLatency
from medrealmm.stats.cases import marked_replies, stored_images
from medrealmm.stats.latency import summarize_measured
from medrealmm.store import RunStore


def latency_table(store: RunStore, overall: Table) -> Table:
    """Latency per condition beside its Score from ``overall``; rows only for conditions
    whose replies were generated here (measured)."""
    scores = {(r["model"], r["images"]): r["mean"] for r in overall.rows}
    labels = {(r["model"], r["images"]): r["label"] for r in overall.rows}
    rows = [
        {
            "label": labels.get((s.model, s.images), condition_label(s.model, s.images)),
            "model": s.model,
            "images": s.images,
            "mean": scores.get((s.model, s.images)),
            "replies": s.replies,
            "median_s": round(s.median_s, 3),
            "p90_s": round(s.p90_s, 3),
            "within_20s": round(s.within_physician_time, 3),
            "first_token_s": _seconds(s.median_first_token_s),
            "first_token_p90_s": _seconds(s.p90_first_token_s),
            "streamed": s.streamed,
            "first_token_note": s.first_token_note,
            # the offline baseline answers in process: its tokens/s measures no server
            "tokens_per_s": None
            if s.median_tokens_per_s is None or s.model == OFFLINE_NAME
            else round(s.median_tokens_per_s, 1),
            "endpoint": ", ".join(s.endpoints),
            "concurrency": ", ".join(map(str, s.concurrency)),
        }
        for s in summarize_measured(measured_replies(store))
    ]
    return Table(
        "latency",
        f"回复时延与质量（时延不影响得分；{PHYSICIAN_REPLY_S:.0f} 秒为论文所述医生在线回复的"
        "预期时间）",
        (
            *("label", "model", "images", "mean", "replies", "median_s", "p90_s"),
            *("first_token_s", "first_token_p90_s", "within_20s", "tokens_per_s", "streamed"),
            *("first_token_note", "endpoint", "concurrency"),
        ),
        rows,
    )


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def measured_replies(store: RunStore) -> Iterator[tuple[str, bool, ReplyLatency]]:
    """(model, images, latency) of each reply with text and a measurement, as
    ``summarize_latency`` keeps them: of the marked replies chosen in SQL
    (``marked_replies``), a few fields and a presence read of each, the ``Response`` (its
    whole text) built for none (``Response``'s defaults where absent)."""
    for model, images, latency, text in marked_replies(store).measured:
        if text:
            measured = ReplyLatency.model_validate_json(latency)
            yield model, stored_images(images), measured
