"""Krippendorff's alpha pinned against the ``krippendorff`` package on the same data."""

from __future__ import annotations

import random

import pytest

from medrealmm.stats.agreement import gwet_ac1
from medrealmm.stats.alpha import krippendorff_alpha, panel_agreement

krippendorff = pytest.importorskip("krippendorff")
np = pytest.importorskip("numpy")


def _reference(units: list[list[bool | None]]) -> float:
    data = np.array(
        [[np.nan if v is None else float(v) for v in unit] for unit in units]
    ).T  # the package wants raters x units
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("raters", [2, 3, 5])
def test_alpha_equals_the_krippendorff_package_with_missing_values(seed: int, raters: int) -> None:
    rng = random.Random(seed * 10 + raters)
    truth = [rng.random() < 0.7 for _ in range(40)]
    units = [
        [
            None if rng.random() < 0.15 else (t if rng.random() < 0.8 else not t)
            for _ in range(raters)
        ]
        for t in truth
    ]
    ours = krippendorff_alpha(units)
    assert ours is not None
    assert ours == pytest.approx(_reference(units), abs=1e-12)


def test_alpha_is_undefined_without_variation_or_pairs() -> None:
    assert krippendorff_alpha([[True, True], [True, True]]) is None
    assert krippendorff_alpha([[True, None], [None, False]]) is None
    assert krippendorff_alpha([[True, False], [False, True]]) == pytest.approx(
        _reference([[True, False], [False, True]])
    )


def test_panel_agreement_splits_by_polarity_and_pairs_on_shared_items() -> None:
    weights = {"i1": 5, "i2": 3, "i3": -4, "i4": -2}
    verdicts = {
        "a": {"i1": True, "i2": False, "i3": True, "i4": False},
        "b": {"i1": True, "i2": True, "i3": True},
        "c": {"i1": False, "i2": False, "i3": False, "i4": False},
    }
    rows = {row.subset: row for row in panel_agreement(verdicts, weights)}
    assert [rows[s].items for s in ("all", "positive", "negative")] == [4, 2, 2]
    a_b = rows["all"].pairs[0]
    assert a_b[:3] == ("a", "b", 3)
    assert a_b[3] == pytest.approx(gwet_ac1([True, False, True], [True, True, True]))
    units = [[verdicts[r].get(i) for r in "abc"] for i in weights]
    assert rows["all"].alpha == pytest.approx(_reference(units), abs=1e-12)
