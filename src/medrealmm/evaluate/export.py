"""Per-sample export of a results folder: one row per reply, in the formats model developers
load (JSONL for scripts, Parquet for pandas / pyarrow, ``.eval`` for ``inspect view``).

Rows come from the one results layer (``load_results``): the same replies, scores and grader
that ``eval score`` and the report show; stale scores stay out as they do there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from medrealmm.evaluate.results import Results, load_results, score_key
from medrealmm.rubric.rounds import evaluation_rubrics
from medrealmm.schema import CaseScore, Response, Rubric
from medrealmm.store import RunStore, stages

#: What ``eval export`` writes, by the output's suffix.
FORMATS = (".jsonl", ".parquet", ".eval")


def export_rows(store: RunStore, grader: str | None = None) -> tuple[Results, list[dict]]:
    """The results ``load_results`` reads, one flat row per reply (sample) with its verdicts."""
    results = load_results(store, grader)
    if results.grader is None:
        raise ValueError(f"no scores in {store.path}; run `medrealmm eval run` first")
    return results, list(_rows(store, results))


def _rows(store: RunStore, results: Results) -> Iterator[dict[str, Any]]:
    rubrics = evaluation_rubrics(store)
    imported = results.imported()
    records = sorted(
        results.records, key=lambda r: (r.model, not r.images, r.instance_id, r.sample)
    )
    for record in records:
        key = stages.response_key(record.model, record.images, record.instance_id, record.sample)
        reply = store.get(stages.EVAL_RESPONSE, key, Response)
        case = store.get(stages.EVAL_SCORE, score_key(record.grader, key), CaseScore)
        latency = reply.latency if reply is not None else None
        yield {
            "case_id": record.instance_id,
            "consultation_id": record.consultation_id,
            "model": record.model,
            # None for imported replies: who wrote them decided what they saw, not this run
            "images": None if record.condition in imported else record.images,
            "imported": record.condition in imported,
            "baseline": record.baseline,
            "sample": record.sample,
            "reply": reply.text if reply is not None else None,
            "reply_status": str(reply.status) if reply is not None else "missing",
            "latency_s": latency.total_s if latency else None,
            "first_token_s": latency.first_token_s if latency else None,
            "output_tokens": latency.output_tokens if latency else None,
            "grader": record.grader,
            "score": None if record.score is None else round(100 * record.score, 4),
            "complete": record.score is not None,
            "positive_met": record.positive_met,
            "negative_triggered": record.negative_triggered,
            "refused": record.refused,
            "rubric_version": record.rubric_version,
            "eval_id": record.eval_id,
            "department": record.department,
            "verdicts": _verdicts(case, rubrics.get(record.instance_id)),
        }


def _verdicts(case: CaseScore | None, rubric: Rubric | None) -> list[dict[str, Any]]:
    criteria = {c.id: c for c in rubric.criteria} if rubric is not None else {}
    rows = []
    for verdict in case.verdicts if case is not None else []:
        criterion = criteria.get(verdict.criterion_id)
        rows.append(
            {
                "criterion_id": verdict.criterion_id,
                "criterion": criterion.text if criterion else None,
                "weight": criterion.weight if criterion else None,
                "kind": str(criterion.kind) if criterion else None,
                "met": verdict.value,
                "status": str(verdict.status),
                "rationale": verdict.rationale,
            }
        )
    return rows


def write_export(store: RunStore, target: Path, grader: str | None = None) -> int:
    """Write the rows to ``target`` in the format its suffix names; return how many rows."""
    suffix = target.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{target}: unknown export format; name a file ending in {FORMATS}")
    results, rows = export_rows(store, grader)
    target.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".jsonl":
        with target.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    elif suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), target)
    else:
        _write_eval_log(store, results, rows, target)
    return len(rows)


def _write_eval_log(store: RunStore, results: Results, rows: list[dict], target: Path) -> None:
    """An inspect_ai log (``inspect view`` opens it), built with inspect_ai's own classes."""
    try:
        from inspect_ai.log import (
            EvalConfig,
            EvalDataset,
            EvalLog,
            EvalMetric,
            EvalResults,
            EvalSample,
            EvalScore,
            EvalSpec,
            write_eval_log,
        )
        from inspect_ai.model import ChatMessageAssistant, ModelOutput
        from inspect_ai.scorer import Score
    except ImportError:
        raise ValueError(
            'a .eval export needs inspect_ai: pip install "medrealmm[inspect]"'
        ) from None
    from medrealmm.evaluate.provenance import benchmark_of

    bench = benchmark_of(store)
    models = sorted({row["model"] for row in rows})
    samples = []
    for row in rows:
        reply = row["reply"] or ""
        met = sum(1 for v in row["verdicts"] if v["met"])
        samples.append(
            EvalSample(
                id=f"{row['case_id']}|{row['model']}|{_mode(row)}",
                epoch=row["sample"] + 1,
                input=row["case_id"],
                target="",
                messages=[ChatMessageAssistant(content=reply, model=row["model"])],
                output=ModelOutput.from_content(model=row["model"], content=reply),
                scores={
                    "rubric_score": Score(
                        value=row["score"] if row["complete"] else "N",
                        answer=reply,
                        explanation=f"{met} of {len(row['verdicts'])} criteria met "
                        f"(+{row['positive_met']} met, -{row['negative_triggered']} triggered)",
                        metadata={"verdicts": row["verdicts"], "grader": row["grader"]},
                    )
                },
                metadata={k: v for k, v in row.items() if k not in ("reply", "verdicts")},
                error=None,
            )
        )
    by_row: dict[str, list[float]] = {}
    for row in rows:
        if row["complete"]:
            by_row.setdefault(f"{row['model']} ({_mode(row)})", []).append(row["score"])
    spec = EvalSpec(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        task="medrealmm",
        task_version=bench.version or 0,
        dataset=EvalDataset(name=bench.name or "run", location=str(bench.location or "")),
        model=models[0] if len(models) == 1 else "several: " + ", ".join(models),
        config=EvalConfig(),
        metadata={"grader": results.grader, "models": models, "benchmark": bench.name},
    )
    log = EvalLog(
        status="success",
        eval=spec,
        results=EvalResults(
            total_samples=len(rows),
            completed_samples=sum(len(scores) for scores in by_row.values()),
            # one score per leaderboard row: a mean across models would compare nothing
            scores=[
                EvalScore(
                    name=name,
                    scorer="rubric_score",
                    metrics={"mean": EvalMetric(name="mean", value=sum(s) / len(s))},
                )
                for name, s in sorted(by_row.items())
            ],
        ),
        samples=samples,
    )
    write_eval_log(log, str(target), format="eval")


def _mode(row: dict[str, Any]) -> str:
    return "imported" if row["images"] is None else "img" if row["images"] else "txt"
