"""The paper's Table 4: each evaluated row's model, endpoint, served id, thinking and decoding,
read from its evaluations' specs (``eval.spec``), never typed by hand."""

from __future__ import annotations

import json
from typing import Any

from medrealmm.evaluate.provenance import EvalSpec, ModelRef
from medrealmm.evaluate.results import Results
from medrealmm.report.tables import Table, condition_label

#: extra_body keys servers read as a thinking switch or budget, in the order they are shown
THINKING_KEYS = ("reasoning_effort", "reasoning", "thinking", "enable_thinking", "thinking_budget")
DECODING_KEYS = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "max_tokens",
    "seed",
    "repetition_penalty",
)


def thinking_effort(params: dict[str, Any]) -> str | None:
    """What the request asked of a reasoning model: OpenAI's ``reasoning_effort``, a
    ``thinking`` / ``reasoning`` object, or Qwen-style ``chat_template_kwargs``; None when it
    asked nothing (the server's default)."""
    body = params.get("extra_body") or {}
    found = {k: body[k] for k in THINKING_KEYS if k in body}
    found.update(
        {k: v for k, v in (body.get("chat_template_kwargs") or {}).items() if k in THINKING_KEYS}
    )
    if not found:
        return None
    return ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False, sort_keys=True)}" for k, v in found.items()
    )


def decoding(params: dict[str, Any]) -> str | None:
    body = params.get("extra_body") or {}
    merged = {**{k: body[k] for k in DECODING_KEYS if k in body}, **params}
    shown = [f"{k}={merged[k]}" for k in DECODING_KEYS if merged.get(k) is not None]
    return ", ".join(shown) or None


def _joined(values: list[str]) -> str | None:
    unique = list(dict.fromkeys(v for v in values if v))
    return "; ".join(unique) or None


def _ref_rows(ref: ModelRef | None) -> dict[str, Any]:
    if ref is None:
        return {}
    return {
        "backend": ref.backend,
        "endpoint": ref.base_url or ("本地离线规则" if ref.backend == "offline" else None),
        "requested": ref.model or ref.name,
        "checkpoint": ref.checkpoint,
        "source": ref.source,
        "served": _joined(ref.served),
        "thinking": thinking_effort(ref.params),
        "decoding": decoding(ref.params),
    }


def models_table(results: Results) -> Table:
    """One row per evaluated condition (model, images), from every evaluation behind it; a
    row made of several evaluations lists each distinct value once."""
    rows = []
    for condition in sorted({r.condition for r in results.records}):
        specs: list[EvalSpec] = results.eval_of(condition)
        if not specs:
            continue
        parts = [_ref_rows(spec.model) for spec in specs]
        graders = [_ref_rows(spec.grader) for spec in specs]
        row: dict[str, Any] = {
            "label": condition_label(*condition),
            "kind": _joined([s.kind for s in specs]),
        }
        for column in (
            *("backend", "endpoint", "requested", "served", "checkpoint", "source"),
            *("thinking", "decoding"),
        ):
            row[column] = _joined([str(p[column]) for p in parts if p.get(column) is not None])
        row["version"] = row["served"] or row["requested"]
        row["k"] = max(s.k for s in specs)
        row["grader"] = _joined([str(g["requested"]) for g in graders])
        row["grader_served"] = _joined([str(g["served"]) for g in graders if g["served"]])
        row["package"] = _joined([s.package_version for s in specs])
        row["evaluations"] = len(specs)
        rows.append(row)
    return Table(
        "models",
        "表 4：被评模型（接口、服务端报告的模型 id 与版本、检查点或日期、说明文档或模型卡链接、"
        "思考强度、解码参数），取自各次评测的记录（eval.spec，来自模型配置 YAML 的 source 与 "
        "checkpoint）；Online 与导入的回复没有模型",
        (
            *("label", "kind", "backend", "endpoint", "requested", "served", "version"),
            *("checkpoint", "source"),
            *("thinking", "decoding", "k", "grader", "grader_served", "package", "evaluations"),
        ),
        rows,
    )
