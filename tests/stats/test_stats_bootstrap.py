from __future__ import annotations

import numpy as np
import pytest

from medrealmm.stats import bootstrap_mean_ci, complete_rubric_score


def test_seeded_and_reproducible() -> None:
    values = list(np.random.default_rng(1).random(50))
    first = bootstrap_mean_ci(values, seed=3)
    assert bootstrap_mean_ci(values, seed=3) == first
    assert bootstrap_mean_ci(values, seed=4) != first
    assert first.low < first.mean < first.high
    assert first.n == 50


def test_width_matches_normal_theory() -> None:
    values = list(np.random.default_rng(2).normal(0.5, 0.1, size=400))
    ci = bootstrap_mean_ci(values, resamples=4000, seed=0)
    expected = 2 * 1.96 * np.std(values) / np.sqrt(len(values))
    assert ci.high - ci.low == pytest.approx(expected, rel=0.15)


def test_degenerate_inputs() -> None:
    assert bootstrap_mean_ci([0.4]).low == bootstrap_mean_ci([0.4]).high == 0.4
    constant = bootstrap_mean_ci([0.2] * 10)
    assert constant.low == pytest.approx(0.2) and constant.high == pytest.approx(0.2)
    with pytest.raises(ValueError, match="at least one value"):
        bootstrap_mean_ci([])
    with pytest.raises(ValueError, match="level"):
        bootstrap_mean_ci([1.0, 2.0], level=1.5)


def test_complete_rubric_score_is_the_paper_formula() -> None:
    weights = {"a": 10, "b": 5, "n": -8}
    assert complete_rubric_score(weights, {"a": True, "b": False, "n": False}) == pytest.approx(
        10 / 15
    )
    assert complete_rubric_score(weights, {"a": True, "b": True, "n": True}) == pytest.approx(
        7 / 15
    )
    assert complete_rubric_score(weights, {"a": False, "b": False, "n": True}) == 0.0  # clipped
    assert complete_rubric_score(weights, {"a": True, "b": True}) is None  # a verdict is missing
    assert complete_rubric_score({"n": -3}, {"n": False}) == 1.0  # penalties only, none triggered
    assert complete_rubric_score({"n": -3}, {"n": True}) == 0.0
    assert complete_rubric_score({}, {}) is None


@pytest.mark.parametrize("n", [2, 7, 1001, 4000])
def test_drawing_in_chunks_gives_the_one_draw_interval(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resamples are drawn a chunk at a time (memory); the numbers are one draw's."""
    import numpy as np

    from medrealmm.stats import bootstrap

    values = list(np.random.default_rng(n).random(n))
    data = np.asarray(values)
    picks = np.random.default_rng(3).integers(0, n, size=(301, n))
    tail = (1 - 0.95) / 2  # as the library computes it
    low, high = np.quantile(data[picks].mean(axis=1), [tail, 1 - tail])
    monkeypatch.setattr(bootstrap, "_CHUNK_DRAWS", 50)
    interval = bootstrap.bootstrap_mean_ci(values, resamples=301, seed=3)
    assert (interval.low, interval.high) == (float(low), float(high))
