"""``stored_version``: a stored rubric's version read from its JSON is the model's version,
and anything that is not exactly a valid rubric's dump is left to the model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from medrealmm.schema import Criterion, CriterionKind, Rubric
from medrealmm.schema.rubric import (
    CRITERION_FIELDS,
    RUBRIC_FIELDS,
    RULE_FIELDS,
    RULE_TYPES,
    MaxCharsRule,
    MinCharsRule,
    stored_version,
)

RUBRICS = [
    Rubric(instance_id="a", criteria=[Criterion(id="c1", text="要点", weight=5)]),
    Rubric(
        instance_id="病例-2",
        round=3,
        approved=True,
        criteria=[
            Criterion(id="p", text='含"引号"与\\', weight=20, tags=["安全", "x"]),
            Criterion(id="n", text="风险", weight=-20),
            Criterion(
                id="r",
                text="长度",
                weight=-3,
                kind=CriterionKind.RULE,
                rule=MaxCharsRule(limit=500),
            ),
            Criterion(
                id="m", text="短", weight=1, kind=CriterionKind.RULE, rule=MinCharsRule(limit=2)
            ),
        ],
    ),
]


def test_the_checked_fields_are_the_models() -> None:
    """A new field must be checked by ``stored_version`` before it can be read without the
    model."""
    assert set(Rubric.model_fields) == RUBRIC_FIELDS
    assert set(Criterion.model_fields) == CRITERION_FIELDS
    for rule in (MaxCharsRule, MinCharsRule):
        assert set(rule.model_fields) == RULE_FIELDS
    assert {MaxCharsRule(limit=1).type, MinCharsRule(limit=1).type} == RULE_TYPES


@pytest.mark.parametrize("rubric", RUBRICS)
def test_a_stored_rubric_gives_the_models_version(rubric: Rubric) -> None:
    assert stored_version(json.loads(rubric.model_dump_json())) == rubric.version


def _dump() -> dict[str, Any]:
    return json.loads(RUBRICS[1].model_dump_json())  # type: ignore[no-any-return]


def _without_default(data: dict[str, Any]) -> None:
    del data["criteria"][1]["kind"]  # the model fills it in


def _float_weight(data: dict[str, Any]) -> None:
    data["criteria"][0]["weight"] = 5.0  # the model reads it as 5


def _zero_weight(data: dict[str, Any]) -> None:
    data["criteria"][0]["weight"] = 0


def _rule_on_llm(data: dict[str, Any]) -> None:
    data["criteria"][0]["rule"] = {"type": "max_chars", "limit": 5}


def _bad_limit(data: dict[str, Any]) -> None:
    data["criteria"][2]["rule"]["limit"] = 0


def _same_ids(data: dict[str, Any]) -> None:
    data["criteria"][1]["id"] = data["criteria"][0]["id"]


def _extra_field(data: dict[str, Any]) -> None:
    data["note"] = ""


def _int_approved(data: dict[str, Any]) -> None:
    data["approved"] = 1


@pytest.mark.parametrize(
    "change",
    [
        _without_default,
        _float_weight,
        _zero_weight,
        _rule_on_llm,
        _bad_limit,
        _same_ids,
        _extra_field,
        _int_approved,
    ],
)
def test_anything_but_a_valid_dump_is_left_to_the_model(change: Any) -> None:
    data = _dump()
    change(data)
    assert stored_version(data) is None
