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


def _loop_cluster_bootstrap(
    values: list[float], clusters: list[str], resamples: int, seed: int, level: float = 0.95
) -> tuple[float, float]:
    """The brute-force reference: the same draws, one resample at a time, in plain Python."""
    import numpy as np

    members: dict[str, list[float]] = {}
    for value, label in zip(values, clusters, strict=True):
        members.setdefault(label, []).append(value)
    groups = list(members.values())
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(groups), size=(resamples, len(groups)))
    means = []
    for row in picks:
        drawn = [v for index in row for v in groups[int(index)]]
        means.append(sum(drawn) / len(drawn))
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def test_cluster_bootstrap_equals_the_brute_force_loop() -> None:
    import random

    rng = random.Random(3)
    for trial in range(20):
        clusters = [f"c{rng.randint(0, 9)}" for _ in range(rng.randint(2, 30))]
        values = [rng.random() for _ in clusters]
        interval = bootstrap_mean_ci(values, clusters=clusters, resamples=400, seed=trial)
        low, high = _loop_cluster_bootstrap(values, clusters, 400, trial)
        if len(set(clusters)) == 1:
            assert interval.low == interval.high == interval.mean
            continue
        assert interval.low == pytest.approx(low, abs=1e-12)
        assert interval.high == pytest.approx(high, abs=1e-12)
        assert interval.clusters == len(set(clusters)) and interval.n == len(values)


def test_cluster_bootstrap_draws_follow_the_exact_distribution() -> None:
    """Three clusters: all 27 equally likely draws enumerated, against 40,000 resamples."""
    import itertools

    import numpy as np

    values = [0.0, 1.0, 0.5, 0.5, 0.9]
    clusters = ["a", "b", "b", "c", "c"]
    groups = [[0.0], [1.0, 0.5], [0.5, 0.9]]
    exact: dict[float, float] = {}
    for draw in itertools.product(range(3), repeat=3):
        drawn = [v for g in draw for v in groups[g]]
        key = round(sum(drawn) / len(drawn), 9)
        exact[key] = exact.get(key, 0) + 1 / 27
    rng = np.random.default_rng(0)
    picks = rng.integers(0, 3, size=(40_000, 3))
    sums = np.array([sum(g) for g in groups])[picks].sum(axis=1)
    sizes = np.array([len(g) for g in groups])[picks].sum(axis=1)
    seen = np.round(sums / sizes, 9)
    for key, probability in exact.items():
        assert np.mean(seen == key) == pytest.approx(probability, abs=0.01)
    interval = bootstrap_mean_ci(values, clusters=clusters, resamples=40_000, seed=0)
    low, high = np.quantile(seen, [0.025, 0.975])
    assert (interval.low, interval.high) == pytest.approx((low, high))


def test_singleton_clusters_are_the_instance_bootstrap() -> None:
    values = [0.1, 0.4, 0.35, 0.8, 0.9, 0.2]
    plain = bootstrap_mean_ci(values, seed=5)
    clustered = bootstrap_mean_ci(values, seed=5, clusters=[str(i) for i in range(6)])
    assert (clustered.low, clustered.high, clustered.mean) == (plain.low, plain.high, plain.mean)
    assert clustered.clusters == 6 and plain.clusters is None


def test_correlated_points_widen_the_interval() -> None:
    """Two identical points per consultation carry no more information than one."""
    values = [0.1, 0.4, 0.35, 0.8, 0.9, 0.2, 0.6, 0.3]
    doubled = [v for v in values for _ in range(2)]
    naive = bootstrap_mean_ci(doubled, seed=1)
    clustered = bootstrap_mean_ci(
        doubled, seed=1, clusters=[f"c{i}" for i in range(len(values)) for _ in range(2)]
    )
    alone = bootstrap_mean_ci(values, seed=1)
    assert clustered.high - clustered.low > naive.high - naive.low
    assert (clustered.low, clustered.high) == pytest.approx((alone.low, alone.high))


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


def test_intervals_over_as_many_units_share_draws_and_equal_one_call_each() -> None:
    from medrealmm.stats.bootstrap import bootstrap_mean_cis

    rng = np.random.default_rng(7)
    many: list[tuple[list[float], list[str] | None]] = [
        (list(rng.random(50)), None),
        (list(rng.random(50)), None),  # as many units: the same draws
        (list(rng.random(60)), [str(i // 2) for i in range(60)]),  # 30 clusters
        (list(rng.random(30)), None),  # 30 units, not clustered
        ([0.5], None),
    ]
    alone = [bootstrap_mean_ci(v, clusters=c, resamples=301, seed=2) for v, c in many]
    assert bootstrap_mean_cis(many, resamples=301, seed=2) == alone
