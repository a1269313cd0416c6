"""Every written form of the round-3 coverage-matrix rows (``testing.deid_written_forms``) is
masked by the rules, over several random draws of its values."""

from __future__ import annotations

import random

import pytest

from medrealmm.deid.registry import rules_registry
from medrealmm.deid.text import find_spans
from medrealmm.testing.deid_written_forms import ROWS

RULES = rules_registry()
FORMS = [(row.name, form, make) for row in ROWS for form, make in row.forms.items()]


def test_every_row_has_at_least_three_written_forms() -> None:
    assert all(len(row.forms) >= 3 for row in ROWS)


@pytest.mark.parametrize(("row", "form", "make"), FORMS, ids=[f"{r}: {f}" for r, f, _ in FORMS])
def test_each_written_form_is_masked(row: str, form: str, make) -> None:
    for seed in range(8):
        text, value = make(random.Random(seed))
        start = text.index(value)
        masked = {i for s in find_spans(text, RULES) for i in range(s.start, s.end)}
        covered = sum(i in masked for i in range(start, start + len(value)))
        assert covered >= 0.9 * len(value), (row, form, text)
