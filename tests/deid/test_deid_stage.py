from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.deid.record import DeidRecord
from medrealmm.deid.stage import run_deid_stage
from medrealmm.io import iter_jsonl
from medrealmm.llm import OfflineClient
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages

# demo-000 has a planted name and phone and skin photos (EXIF); demo-001 one more photo.
CASES = ("demo-000", "demo-001")


def seed_store(run: Path, demo_dir: Path) -> RunStore:
    store = RunStore(run)
    store.set_meta(stages.image_root_key(stages.CORPUS_SAMPLED), str(demo_dir))
    store.put_many(
        stages.CORPUS_SAMPLED,
        (
            (c.id, c)
            for c in iter_jsonl(demo_dir / "consultations.jsonl", Consultation)
            if c.id in CASES
        ),
    )
    return store


@pytest.mark.slow
async def test_stage_masks_text_and_images_and_resumes(demo_dir: Path, tmp_path: Path) -> None:
    truth = json.loads((demo_dir / "truth.json").read_text(encoding="utf-8"))
    with seed_store(tmp_path, demo_dir) as store:
        stats = await run_deid_stage(store, tmp_path, OfflineClient())
        assert (stats.done, stats.failed) == (2, 0)
        assert store.image_root(stages.CORPUS_DEID) == tmp_path / "deid"  # kept run-relative

        masked = store.get(stages.CORPUS_DEID, "demo-000", Consultation)
        assert masked is not None
        text = "".join(e.content for e in masked.events)
        for values in truth["demo-000"]["planted_text_pii"].values():
            assert not any(v in text for v in values)
        assert "[NAME]" in text and "[PHONE]" in text

        record = store.get(stages.DEID_RECORD, "demo-000", DeidRecord)
        assert record is not None and record.llm_ok is True
        assert {s.type.value for t in record.turns for s in t.spans} == {"NAME", "PHONE"}
        assert len(record.images) == len(masked.patient_medical_images)
        for ref in masked.patient_medical_images:
            with Image.open(tmp_path / "deid" / ref.path) as img:
                assert not img.getexif()
            assert ref.sha256

        # Resume: nothing is redone; a deleted unit is redone alone.
        again = await run_deid_stage(store, tmp_path, OfflineClient())
        assert (again.done, again.skipped) == (0, 2)
        store.delete(stages.CORPUS_DEID, "demo-001")
        third = await run_deid_stage(store, tmp_path, OfflineClient())
        assert (third.done, third.skipped) == (1, 1)


async def test_stage_reads_only_corpus_sampled_and_needs_an_image_root(
    tmp_path: Path, demo_dir: Path
) -> None:
    with RunStore(tmp_path) as store:
        case = next(iter_jsonl(demo_dir / "consultations.jsonl", Consultation))
        store.put(stages.RAW, case.id, case)  # raw alone is never de-identified
        with pytest.raises(ValueError, match="corpus build"):
            await run_deid_stage(store, tmp_path, None)
        store.replace({stages.CORPUS_SAMPLED: []})  # built, empty, but no image root
        with pytest.raises(ValueError, match="image root"):
            await run_deid_stage(store, tmp_path, None)


def test_cli_text_masks_and_lists_spans() -> None:
    result = CliRunner().invoke(app, ["deid", "text", "我叫朱秀英，电话13812345678", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["masked"] == "我叫[NAME]，电话[PHONE]"
    assert [s["type"] for s in payload["spans"]] == ["NAME", "PHONE"]


def test_cli_help_explains_every_command() -> None:
    runner = CliRunner()
    for args in (["deid", "--help"], ["deid", "run", "--help"], ["deid", "image", "--help"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0
        assert "Mask" in result.output or "mask" in result.output


def test_cli_image_reports_a_missing_file_clearly(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["deid", "image", str(tmp_path / "nope.png"), "out.png"])
    assert result.exit_code == 2
    assert "image not found" in result.output


async def test_an_unreadable_image_fails_its_case_only_and_is_recorded(
    demo_dir: Path, tmp_path: Path
) -> None:
    source = tmp_path / "src"
    case = next(
        c for c in iter_jsonl(demo_dir / "consultations.jsonl", Consultation) if c.id == "demo-001"
    )
    for ref in case.patient_medical_images:
        (source / ref.path).parent.mkdir(parents=True, exist_ok=True)
        (source / ref.path).write_bytes(b"not an image")
    with RunStore(tmp_path / "run") as store:
        store.set_meta(stages.image_root_key(stages.CORPUS_SAMPLED), str(source))
        store.put(stages.CORPUS_SAMPLED, case.id, case)
        stats = await run_deid_stage(store, tmp_path / "run", None)
        assert stats.failed == 1 and case.id in stats.errors
        assert store.count(stages.CORPUS_DEID) == 0  # never an unmasked copy downstream
        assert case.id in store.failures(stages.DEID_RECORD)


async def test_record_keeps_offsets_types_and_keyed_hashes_never_the_text(
    tmp_path: Path,
) -> None:
    from medrealmm.deid.record import keyed_digest
    from medrealmm.deid.stage import SECRET_META, deid_one, run_secret

    text = "我叫朱秀英，电话13812345678"
    consultation = Consultation.model_validate(
        {
            "id": "c1",
            "department": "皮肤科",
            "events": [{"sender": "patient", "timestamp": "2025-01-01T08:00:00", "content": text}],
        }
    )
    with RunStore(tmp_path) as store:
        _, record = await deid_one(consultation, tmp_path, tmp_path / "out", None, store)
        secret = run_secret(store)
        assert store.get_meta(SECRET_META) == secret.hex()
        assert run_secret(store) == secret  # one secret per run
        dumped = record.model_dump_json()
    assert "朱秀英" not in dumped and "13812345678" not in dumped
    spans = record.turns[0].spans
    assert [(text[s.start : s.end], s.type.value) for s in spans] == [
        ("朱秀英", "NAME"),
        ("13812345678", "PHONE"),
    ]
    assert spans[0].digest == keyed_digest("朱秀英", secret)
    assert keyed_digest("朱秀英", b"other secret") != spans[0].digest


async def test_record_keeps_near_misses_in_offsets_of_the_masked_turn(tmp_path: Path) -> None:
    from medrealmm.deid.stage import deid_one

    text = "我叫朱秀英，抖音号kxq_20240，问问白加黑的副作用。"
    consultation = Consultation.model_validate(
        {
            "id": "c1",
            "department": "皮肤科",
            "events": [{"sender": "patient", "timestamp": "2025-01-01T08:00:00", "content": text}],
        }
    )
    with RunStore(tmp_path) as store:
        masked, record = await deid_one(consultation, tmp_path, tmp_path / "out", None, store)
    content = masked.events[0].content
    suspects = record.turns[0].suspects
    if suspects:  # a recognizer may mask the account itself; what is left is shown in place
        assert [content[s.start : s.end] for s in suspects] == ["kxq_20240"]
        assert suspects[0].reason == "label_value"
    assert "白加黑" in content


async def test_record_keeps_each_veto_drop_with_its_class_never_its_text(tmp_path: Path) -> None:
    from medrealmm.deid.stage import deid_one

    text = "我叫朱秀英，舒眠宁吃完两盒还是睡不着"
    consultation = Consultation.model_validate(
        {
            "id": "c1",
            "department": "精神科",
            "events": [{"sender": "patient", "timestamp": "2025-01-01T08:00:00", "content": text}],
        }
    )
    with RunStore(tmp_path) as store:
        masked, record = await deid_one(consultation, tmp_path, tmp_path / "out", None, store)
    content = masked.events[0].content
    shown = [(content[s.start : s.end], s.reason) for s in record.turns[0].suspects]
    assert ("舒眠宁", "used_like_a_medicine") in shown
    assert "舒眠宁" not in record.model_dump_json()
