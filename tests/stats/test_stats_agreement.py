from __future__ import annotations

import numpy as np
import pytest

from medrealmm.stats import agreement, cohen_kappa, gwet_ac1, raw_agreement

A = [1, 1, 1, 1, 1, 1, 1, 1, 0, 0]
B = [1, 1, 1, 1, 1, 1, 1, 0, 1, 0]


def irrcac_ac1(ratings: np.ndarray) -> float:
    """irrCAC's gwet.ac1.raw for an items x raters matrix (NaN = not rated), written out
    independently of medrealmm: p_a over items with >= 2 ratings, pi_k averaged over items
    with >= 1 rating, p_e = sum_k pi_k (1 - pi_k) / (q - 1)."""
    categories = sorted({v for v in ratings.ravel() if not np.isnan(v)})
    q = len(categories)
    counts = np.stack([(ratings == k).sum(axis=1) for k in categories], axis=1).astype(float)
    r_i = counts.sum(axis=1)
    two = r_i >= 2
    pa = np.mean((counts[two] * (counts[two] - 1)).sum(axis=1) / (r_i[two] * (r_i[two] - 1)))
    rated = r_i >= 1
    pi_k = (counts[rated] / r_i[rated, None]).mean(axis=0)
    pe = float((pi_k * (1 - pi_k)).sum() / (q - 1))
    return float((pa - pe) / (1 - pe))


def test_hand_computed_example() -> None:
    # p_o = 8/10, pi = 16/20 = 0.8, p_e = 2 * 0.8 * 0.2 = 0.32 -> AC1 = 0.48 / 0.68 = 12/17
    assert raw_agreement(A, B) == pytest.approx(0.8)
    assert gwet_ac1(A, B) == pytest.approx(12 / 17)
    # kappa: p_e = 0.8 * 0.8 + 0.2 * 0.2 = 0.68 -> (0.8 - 0.68) / 0.32 = 0.375
    assert cohen_kappa(A, B) == pytest.approx(0.375)
    result = agreement(A, B)
    assert (result.n, result.positive_rate) == (10, pytest.approx(0.8))


def test_skew_keeps_ac1_high_where_kappa_collapses() -> None:
    # 19 of 20 both positive, one disagreement: the paradox AC1 exists for.
    a = [1] * 20
    b = [1] * 19 + [0]
    # p_o = 0.95, pi = 39/40, p_e = 2 * 39/40 * 1/40 = 0.04875
    assert gwet_ac1(a, b) == pytest.approx((0.95 - 0.04875) / (1 - 0.04875))
    assert cohen_kappa(a, b) == pytest.approx(0.0)


def test_total_disagreement_is_minus_one() -> None:
    assert gwet_ac1([1, 0], [0, 1]) == pytest.approx(-1.0)
    assert gwet_ac1([1, 1, 1], [0, 0, 0]) == pytest.approx(-1.0)
    assert cohen_kappa([1, 1, 1], [0, 0, 0]) == pytest.approx(0.0)


@pytest.mark.parametrize("label", [True, False])
def test_one_shared_label_is_perfect_agreement_and_kappa_undefined(label: bool) -> None:
    a = [label] * 5
    assert gwet_ac1(a, a) == 1.0
    assert cohen_kappa(a, a) is None
    assert agreement(a, a).kappa is None


def test_empty_and_mismatched_inputs_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="at least one item"):
        gwet_ac1([], [])
    with pytest.raises(ValueError, match="same items: 2 vs 1"):
        agreement([1, 0], [1])


@pytest.mark.parametrize("seed", range(12))
def test_matches_irrcac_reference_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    rate = rng.uniform(0.02, 0.98)
    a = rng.random(n) < rate
    b = np.where(rng.random(n) < rng.uniform(0, 0.4), ~a, a)
    if len({*a, *b}) < 2:
        b[0] = not a[0]  # irrCAC needs both categories to appear (q = 2)
    expected = irrcac_ac1(np.stack([a, b], axis=1).astype(float))
    assert gwet_ac1(list(a), list(b)) == pytest.approx(expected)
    assert gwet_ac1(list(b), list(a)) == pytest.approx(expected)
    assert -1.0 <= expected <= 1.0
