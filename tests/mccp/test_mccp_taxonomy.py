from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from medrealmm.io import DataError
from medrealmm.mccp import builtin_taxonomy, load_taxonomy


def test_builtin_taxonomies_cover_the_paper_labels() -> None:
    intent = builtin_taxonomy("intent")
    assert len(intent.ids) == 7
    assert {"diagnosis_seeking", "examination_interpretation", "follow_up"} <= set(intent.ids)
    stage = builtin_taxonomy("stage")
    assert {"history_taking", "examination_review", "diagnosis_and_treatment"} <= set(stage.ids)
    assert stage.baseline_image_label == "examination_review"
    with pytest.raises(ValueError, match="intent, stage"):
        builtin_taxonomy("mood")


def test_output_schema_is_closed() -> None:
    schema = builtin_taxonomy("stage").output_schema
    assert schema.model_validate({"label": "history_taking"}).label == "history_taking"
    with pytest.raises(ValidationError):
        schema.model_validate({"label": "病史采集"})


def test_custom_taxonomy_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "intent.yaml"
    path.write_text("name: intent\nlabels: [\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"intent\.yaml") as caught:
        load_taxonomy(path)
    assert caught.value.field == "<yaml>"
    path.write_text(
        "name: intent\ntitle: 意图\nquestion: 问\ndefault: other\n"
        "labels:\n  - {id: a, name: 甲}\n  - {id: b, name: 乙}\n",
        encoding="utf-8",
    )
    with pytest.raises(DataError, match="default 'other' is not one of the labels"):
        load_taxonomy(path)
