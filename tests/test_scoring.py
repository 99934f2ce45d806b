"""Top-k selection with random ties, and regret/misidentification under ties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bandit_envs.scoring import score, top_k


def test_regret_is_zhou_eq1() -> None:
    means = np.array([0.9, 0.8, 0.5, 0.1])
    s = score(means, np.array([0, 2]), 2)
    assert s.aggregate_regret == pytest.approx((0.9 + 0.8 - 0.9 - 0.5) / 2)
    assert s.misidentified and s.precision == 0.5


def test_any_set_with_the_best_total_is_correct() -> None:
    means = np.array([0.9, 0.5, 0.5, 0.5, 0.1])
    for rec in ([0, 1], [0, 2], [0, 3]):
        s = score(means, np.array(rec), 2)
        assert s.aggregate_regret == 0.0 and not s.misidentified and s.precision == 1.0
    s = score(means, np.array([1, 2]), 2)  # both tied arms, but misses the 0.9
    assert s.misidentified and s.precision == 0.5
    assert s.aggregate_regret == pytest.approx(0.2)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=2, max_size=12), st.data())
def test_correct_iff_regret_zero(values: list[float], data) -> None:
    means = np.array(values)
    k = data.draw(st.integers(1, len(values) - 1))
    rec = np.array(sorted(data.draw(st.permutations(range(len(values))))[:k]))
    s = score(means, rec, k)
    best = np.sort(means)[::-1][:k].sum()
    assert s.misidentified == (means[rec].sum() < best - 1e-12)
    assert (s.aggregate_regret == 0.0) == (not s.misidentified)
    assert 0.0 <= s.precision <= 1.0


def test_top_k_random_ties_are_uniform() -> None:
    values = np.array([1.0, 0.5, 0.5, 0.5, 0.0])
    rng = np.random.default_rng(0)
    counts = np.zeros(5)
    for _ in range(3000):
        counts[top_k(values, 2, rng)] += 1
    assert counts[0] == 3000 and counts[4] == 0
    # each tied arm is chosen w.p. 1/3: 1000 expected, sd 25.8; allow 6 sd
    assert np.all(np.abs(counts[1:4] - 1000) < 6 * 25.8)


def test_top_k_skips_minus_infinity_until_needed() -> None:
    values = np.array([-np.inf, 0.2, -np.inf, 0.1])
    assert list(top_k(values, 2, np.random.default_rng(0))) == [1, 3]
    assert set(top_k(values, 3, np.random.default_rng(0))) >= {1, 3}


def test_bad_recommendations() -> None:
    with pytest.raises(ValueError, match="exactly k=2 distinct"):
        score(np.zeros(4), np.array([1, 1]), 2)
    with pytest.raises(ValueError, match="k=5"):
        top_k(np.zeros(4), 5, None)
