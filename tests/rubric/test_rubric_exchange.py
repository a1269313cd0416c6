"""File round trip with physicians: export a round, import their feedback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medrealmm.io import DataError
from medrealmm.llm import OfflineClient
from medrealmm.rubric import RubricSettings, final_rubric, load_feedback, round_history
from medrealmm.rubric.exchange import ReviewPacket, export_round, import_feedback
from medrealmm.rubric.stage import generate_all, refine_all
from medrealmm.schema import Instance
from medrealmm.store import RunStore, stages

SETTINGS = RubricSettings(with_images=False)  # the seeded instance has no image root


def _write(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
    )
    return path


async def test_export_then_import_round_trip(tmp_path: Path, tinea_instance: Instance) -> None:
    iid = tinea_instance.id
    with RunStore(tmp_path / "run") as store:
        store.put(stages.MCCP_INSTANCE, iid, tinea_instance)
        await generate_all(store, OfflineClient(), SETTINGS)
        assert export_round(store, tmp_path / "review.jsonl", tmp_path / "fb.jsonl", SETTINGS) == 1
        packet = ReviewPacket.model_validate_json((tmp_path / "review.jsonl").read_text())
        assert packet.round == 0 and packet.reference_reply == tinea_instance.target_reply
        assert packet.criteria[-1].kind == "rule" and packet.criteria[-1].reference_overlap is None
        assert all(c.reference_overlap is not None for c in packet.criteria[:-1])
        template = json.loads((tmp_path / "fb.jsonl").read_text())
        assert template == {"instance_id": iid, "round": 0, "items": []}

        template["items"] = [
            {
                "type": "split_criterion",
                "criterion_id": "c02",
                "parts": [
                    {"text": "外用药疗程足够", "weight": 5},
                    {"text": "日常护理建议", "weight": 3},
                ],
            }
        ]
        saved = import_feedback(store, _write(tmp_path / "fb.jsonl", [template]), reviewer="dr_z")
        assert saved[0].reviewer == "dr_z"
        await refine_all(store, OfflineClient(), SETTINGS)
        assert export_round(store, tmp_path / "review.jsonl", tmp_path / "fb.jsonl", SETTINGS) == 1
        packet = ReviewPacket.model_validate_json((tmp_path / "review.jsonl").read_text())
        assert packet.round == 1 and any(line.startswith("- c02") for line in packet.changes)

        import_feedback(store, tmp_path / "fb.jsonl", reviewer="dr_z")  # template = approve
        final = final_rubric(store, iid)
        assert final is not None and final.round == 1 and len(round_history(store, iid)) == 2
        assert export_round(store, tmp_path / "review.jsonl", tmp_path / "fb.jsonl", SETTINGS) == 0


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ({"instance_id": "tinea@4", "round": 0}, "reviewer"),
        (
            {"instance_id": "tinea@4", "round": 0, "reviewer": "r", "items": [{"type": "oops"}]},
            "items.0.type",
        ),
        (
            {
                "instance_id": "tinea@4",
                "round": 0,
                "reviewer": "r",
                "items": [{"type": "remove_criterion", "criterion_id": "c77"}],
            },
            "items.0.criterion_id",
        ),
        ({"instance_id": "nope", "round": 0, "reviewer": "r"}, "instance_id"),
        ({"instance_id": "tinea@4", "round": 3, "reviewer": "r"}, "round"),
    ],
)
async def test_bad_feedback_names_file_line_and_field_and_saves_nothing(
    tmp_path: Path, tinea_instance: Instance, line: dict[str, object], field: str
) -> None:
    with RunStore(tmp_path / "run") as store:
        other = tinea_instance.model_copy(update={"id": "other@4"})
        for instance in (tinea_instance, other):
            store.put(stages.MCCP_INSTANCE, instance.id, instance)
        await generate_all(store, OfflineClient(), SETTINGS)
        good = {"instance_id": other.id, "round": 0, "reviewer": "r", "items": []}
        path = _write(tmp_path / "fb.jsonl", [good, line])
        with pytest.raises(DataError) as info:
            import_feedback(store, path)
        assert (info.value.path, info.value.line, info.value.field) == (path, 2, field)
        assert load_feedback(store, other.id, 0) is None  # the good line was not saved


async def test_duplicate_lines_are_rejected(tmp_path: Path, tinea_instance: Instance) -> None:
    with RunStore(tmp_path / "run") as store:
        store.put(stages.MCCP_INSTANCE, tinea_instance.id, tinea_instance)
        await generate_all(store, OfflineClient(), SETTINGS)
        line = {"instance_id": tinea_instance.id, "round": 0, "reviewer": "r"}
        with pytest.raises(DataError, match="duplicate of line 1"):
            import_feedback(store, _write(tmp_path / "fb.jsonl", [line, line]))
