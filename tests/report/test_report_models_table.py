"""Table 4 comes from the evaluations' specs: endpoint, served id, thinking, decoding."""

from __future__ import annotations

from datetime import UTC, datetime

from medrealmm.evaluate.provenance import BenchmarkRef, EvalSpec, ModelRef
from medrealmm.evaluate.results import Results
from medrealmm.report.models_table import decoding, models_table, thinking_effort
from medrealmm.stats.cases import CaseRecord

GRADER = ModelRef(name="judge", backend="openai", model="judge-model", served=["judge-2025-01"])
QWEN = ModelRef(
    name="qwen",
    backend="openai",
    model="Qwen/Qwen3-VL-32B",
    base_url="http://127.0.0.1:8000/v1",
    params={
        "temperature": 0.7,
        "top_p": 0.95,
        "extra_body": {"top_k": 32, "chat_template_kwargs": {"enable_thinking": True}},
    },
    served=["Qwen/Qwen3-VL-32B-Instruct"],
)


def spec(eval_id: str, model: ModelRef | None, kind: str = "generated") -> EvalSpec:
    return EvalSpec(
        eval_id=eval_id,
        kind=kind,  # type: ignore[arg-type]
        label=model.name if model else "online",
        model=model,
        grader=GRADER,
        images=True,
        grader_images=True,
        k=3,
        prompts={},
        benchmark=BenchmarkRef(kind="run", location="."),
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def record(model: str, eval_id: str) -> CaseRecord:
    return CaseRecord(
        *("judge", model, True, "case-1", 0, 0.5, 1, 0),
        *("皮肤科", "湿疹", "症状咨询", "诊断解释", 1, 3, False),
        eval_id=eval_id,
    )


def test_rows_carry_endpoint_served_id_thinking_and_decoding() -> None:
    specs = {"e1": spec("e1", QWEN), "e2": spec("e2", None, "online")}
    results = Results("judge", [record("qwen", "e1"), record("online", "e2")], [], specs)
    rows = {r["label"].split(" ·")[0]: r for r in models_table(results).rows}
    qwen = rows["qwen"]
    assert qwen["endpoint"] == "http://127.0.0.1:8000/v1"
    assert qwen["requested"] == "Qwen/Qwen3-VL-32B"
    assert qwen["served"] == qwen["version"] == "Qwen/Qwen3-VL-32B-Instruct"
    assert qwen["thinking"] == "enable_thinking=true"
    assert qwen["decoding"] == "temperature=0.7, top_p=0.95, top_k=32"
    assert qwen["k"] == 3 and qwen["grader"] == "judge-model"
    assert qwen["grader_served"] == "judge-2025-01"
    online = rows["Online（医生原始回复）"]
    assert online["kind"] == "online" and online["requested"] is None


def test_thinking_and_decoding_read_the_usual_keys() -> None:
    assert (
        thinking_effort({"extra_body": {"reasoning_effort": "high"}}) == 'reasoning_effort="high"'
    )
    assert thinking_effort({"temperature": 0}) is None
    assert decoding({"temperature": 0.0, "seed": 7}) == "temperature=0.0, seed=7"
    assert decoding({}) is None


def test_source_link_and_checkpoint_come_from_the_models_yaml(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Table 4 shows the documentation link and the checkpoint apart from the model id, both
    read from the models YAML through the spec; a model without them keeps its old eval id."""
    from medrealmm.evaluate.provenance import eval_id_of
    from medrealmm.llm.config import load_model_specs

    config = tmp_path / "models.yaml"
    config.write_text(
        "models:\n"
        "  - name: gpt\n    model: gpt-4.1\n    base_url: http://127.0.0.1:9/v1\n"
        "    source: https://platform.openai.com/docs/models/gpt-4.1\n"
        "    checkpoint: '2025-04-14'\n"
        "  - name: plain\n    model: m\n    base_url: http://127.0.0.1:9/v1\n",
        encoding="utf-8",
    )
    found = load_model_specs(config)
    ref = ModelRef.from_spec(found["gpt"])
    results = Results("judge", [record("gpt", "e1")], [], {"e1": spec("e1", ref)})
    (row,) = models_table(results).rows
    assert row["source"] == "https://platform.openai.com/docs/models/gpt-4.1"
    assert row["checkpoint"] == "2025-04-14" and row["requested"] == "gpt-4.1"
    plain = ModelRef.from_spec(found["plain"])
    old_identity = plain.model_dump(mode="json", exclude={"served", "source", "checkpoint"})
    assert plain.identity() == old_identity  # the id an evaluation made before keeps
    fields = {
        "kind": "generated", "label": "plain", "grader": GRADER, "images": True,
        "grader_images": True, "k": 1, "prompts": {},
        "benchmark": BenchmarkRef(kind="run", location="."),
    }  # fmt: skip
    assert eval_id_of(model=plain, **fields) == eval_id_of(  # type: ignore[arg-type]
        model=plain.model_copy(update={"source": "https://example.org/card"}), **fields
    )
