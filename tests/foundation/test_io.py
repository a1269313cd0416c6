from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from medrealmm.io import DataError, iter_jsonl, read_parquet_rows, write_jsonl, write_parquet
from medrealmm.schema import Consultation, Event, Sender


def _consultation(i: int) -> Consultation:
    return Consultation(
        id=f"c{i}",
        department="皮肤科",
        events=[Event(sender=Sender.PATIENT, timestamp=datetime(2025, 1, 1), content=f"第{i}条")],
    )


def test_jsonl_round_trip_preserves_records(tmp_path: Path) -> None:
    records = [_consultation(i) for i in range(5)]
    path = tmp_path / "c.jsonl"
    assert write_jsonl(path, records) == 5
    assert list(iter_jsonl(path, Consultation)) == records
    assert "第0条" in path.read_text(encoding="utf-8")  # UTF-8, not \u escapes


def test_jsonl_is_streamed_not_loaded(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write_jsonl(path, [_consultation(0)])
    with path.open("a", encoding="utf-8") as handle:
        handle.write("{broken\n")
    reader = iter_jsonl(path, Consultation)
    assert next(reader).id == "c0"  # the good record arrives before the bad line is read
    with pytest.raises(DataError):
        next(reader)


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(_consultation(0).model_dump_json() + "\n\n{not json}\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        list(iter_jsonl(path, Consultation))
    assert info.value.line == 3
    assert str(path) in str(info.value) and ":3:" in str(info.value)


def test_schema_error_names_the_field(tmp_path: Path) -> None:
    raw = json.loads(_consultation(0).model_dump_json())
    raw["events"][0]["sender"] = "nurse"
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(raw, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        list(iter_jsonl(path, Consultation))
    assert info.value.field == "events.0.sender"
    assert info.value.line == 1


def test_parquet_export_is_readable_and_deterministic(tmp_path: Path) -> None:
    records = [_consultation(i) for i in range(3)]
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    from medrealmm.release.arrow import JSON_COLUMNS, SCHEMAS

    schema, json_columns = SCHEMAS["consultations"], JSON_COLUMNS["consultations"]
    write_parquet(a, records, schema, json_columns=json_columns)
    write_parquet(b, records, schema, json_columns=json_columns)
    assert a.read_bytes() == b.read_bytes()
    rows = read_parquet_rows(a)
    assert [r["id"] for r in rows] == ["c0", "c1", "c2"]
    assert rows[0]["events"][0]["content"] == "第0条"  # nested: a list of structs, not JSON


def test_symlinked_images_folder_is_accepted_by_every_command(tmp_path: Path) -> None:
    """One containment rule: a linked images/ folder resolves (review, deid, release, dialogue)
    as it validates; ``..`` (past the schema) still escapes."""
    from medrealmm.io import MissingImageError, resolve_image
    from medrealmm.schema import ImageRef

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a.png").write_bytes(b"png")
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    (dataset / "images").symlink_to(elsewhere)
    linked = resolve_image(dataset, ImageRef(path="images/a.png", origin="patient"))
    assert linked.read_bytes() == b"png"
    with pytest.raises(MissingImageError, match="escapes"):
        resolve_image(dataset, ImageRef.model_construct(path="../elsewhere/a.png"))


def test_the_validator_opens_each_distinct_image_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exports reuse a photo across many references: each file is checked once, every
    reference is still counted, and a bad file is still named at its first reference."""
    from PIL import Image

    import medrealmm.io.dataset as dataset
    from medrealmm.schema import ImageRef

    (tmp_path / "images").mkdir()
    for name in ("a", "b"):
        Image.new("RGB", (8, 8)).save(tmp_path / "images" / f"{name}.jpg")
    opened: list[str] = []

    def counted(root: Path | str, relative: str, max_pixels: int) -> str | None:
        opened.append(relative)
        return check_image(root, relative, max_pixels)

    check_image = dataset.check_image
    monkeypatch.setattr(dataset, "check_image", counted)
    cases = []
    for i, photo in enumerate(["a", "b", "a", "a", "b"]):
        case = _consultation(i)
        case.events[0].images = [ImageRef(path=f"images/{photo}.jpg", origin="patient")]
        cases.append(case)
    source = tmp_path / "consultations.jsonl"
    write_jsonl(source, cases)
    summary = dataset.check_dataset(source)
    assert sorted(opened) == ["images/a.jpg", "images/b.jpg"] and summary.images == 5
    (tmp_path / "images" / "b.jpg").write_bytes(b"not a jpeg")
    with pytest.raises(DataError, match=r"images/b\.jpg cannot be decoded") as raised:
        dataset.check_dataset(source)
    assert raised.value.line == 2  # named where it is first referenced
