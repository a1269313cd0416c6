"""The release's Parquet keeps nested data as Arrow lists and structs; old JSON-text releases
still load."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from medrealmm.release import ReleaseInfo, build_release, load_release, record_acceptance
from medrealmm.release.arrow import CRITERION, EVENT, IMAGE, JUDGEMENT, SCHEMAS
from medrealmm.schema import (
    AgentJudgement,
    Consultation,
    Criterion,
    Event,
    ImageRef,
    Instance,
    Rubric,
)

INFO = ReleaseInfo(
    name="medrealmm",
    version="1.0",
    title="测试集",
    authors=("维护者",),
    dua="测试用数据使用协议。\n",
)


def test_every_schema_names_exactly_its_model_fields() -> None:
    pairs: list[tuple[pa.DataType | pa.Schema, type[BaseModel]]] = [
        (SCHEMAS["consultations"], Consultation),
        (SCHEMAS["instances"], Instance),
        (SCHEMAS["rubrics"], Rubric),
        (EVENT, Event),
        (IMAGE, ImageRef),
        (JUDGEMENT, AgentJudgement),
        (CRITERION, Criterion),
    ]
    for arrow_type, model in pairs:
        names = (
            arrow_type.names
            if isinstance(arrow_type, pa.Schema)
            else [arrow_type.field(i).name for i in range(arrow_type.num_fields)]
        )
        assert names == list(model.model_fields), model.__name__


def test_nested_columns_are_lists_and_structs(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    manifest = build_release(run_dir, out, INFO).manifest
    instances = pq.read_table(out / "data" / "instances.parquet")
    assert pa.types.is_list(instances.schema.field("context").type)
    assert pa.types.is_struct(instances.schema.field("cropper").type)
    rubrics = pq.read_table(out / "data" / "rubrics.parquet")
    assert pa.types.is_struct(rubrics.schema.field("criteria").type.value_type)
    frame = rubrics.to_pandas()  # pandas shows fields, not text
    first = frame["criteria"].iloc[0][0]
    assert isinstance(first, dict) and isinstance(first["weight"], int)
    events = pq.read_table(out / "data" / "consultations.parquet").column("events").to_pylist()
    assert events[0][0]["sender"] in ("patient", "physician")
    assert manifest["tables"]["instances"]["json_columns"] == []
    assert manifest["tables"]["consultations"]["json_columns"] == ["meta"]


def _as_json_text_release(out: Path) -> None:
    """Rewrite a release as releases before nested columns were: nested data as JSON text."""
    old_columns = {
        "consultations": ("events", "meta"),
        "instances": ("context", "cropper", "verifier"),
        "rubrics": ("criteria",),
    }
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    for table, columns in old_columns.items():
        path = out / "data" / f"{table}.parquet"
        rows = pq.read_table(path).to_pylist()
        for row in rows:
            for column in columns:
                value = row[column]
                if isinstance(value, str):
                    value = json.loads(value)
                row[column] = json.dumps(value, ensure_ascii=False)
        pq.write_table(pa.Table.from_pylist(rows), path)
        manifest["tables"][table]["json_columns"] = list(columns)
        name = f"data/{table}.parquet"
        manifest["files"][name] = hashlib.sha256(path.read_bytes()).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_the_loader_reads_both_layouts_alike(run_dir: Path, tmp_path: Path, dua_file: Path) -> None:
    new, old = tmp_path / "new", tmp_path / "old"
    build_release(run_dir, new, INFO)
    build_release(run_dir, old, INFO)
    _as_json_text_release(old)
    assert pa.types.is_string(
        pq.read_schema(old / "data" / "instances.parquet").field("context").type
    )
    loaded = []
    for folder in (new, old):
        record_acceptance(
            folder / "DUA.md", name="李研究员", dataset="medrealmm", release="medrealmm 1.0"
        )
        loaded.append(load_release(folder))
    assert loaded[0].instances == loaded[1].instances and loaded[0].instances
    assert loaded[0].rubrics == loaded[1].rubrics
    assert loaded[0].consultations == loaded[1].consultations
