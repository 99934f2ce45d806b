"""The engine's shared helpers against plain reference implementations."""

from __future__ import annotations

import numpy as np
import pytest

from agents import engine


def _top_k_reference(values, cand, k, rng, out, start) -> None:
    """The definition: threshold = the k-th largest value by a stable sort, then the
    candidates above it, then ``need`` tied ones chosen by ``engine.choose_distinct``."""
    m = cand.shape[0]
    if k <= 0:
        return
    if k >= m:
        out[start : start + m] = cand
        return
    vals = values[cand]
    thr = vals[np.argsort(-vals, kind="mergesort")[k - 1]]
    above = cand[vals > thr]
    tied = cand[vals == thr].copy()
    out[start : start + above.shape[0]] = above
    need = k - above.shape[0]
    engine.choose_distinct(tied, tied.shape[0], need, rng)
    out[start + above.shape[0] : start + k] = tied[:need]


@pytest.mark.parametrize("levels", [2, 5, 1000])
def test_top_k_into_matches_the_sorting_definition(levels: int) -> None:
    """Same arms in the same order and the same draws, with ties, -inf and subsets."""
    gen = np.random.default_rng(7)
    for trial in range(400):
        n = int(gen.integers(1, 300))
        values = gen.integers(0, levels, size=n) / levels
        values[gen.random(n) < 0.1] = -np.inf
        cand = np.flatnonzero(gen.random(n) < 0.8) if trial % 2 else np.arange(n)
        k = int(gen.integers(0, cand.shape[0] + 2))
        start = int(gen.integers(0, 3))
        got = np.full(start + max(k, 0) + 2, -7, dtype=np.int64)
        want = got.copy()
        rng_got, rng_want = np.random.default_rng(trial), np.random.default_rng(trial)
        engine.top_k_into(values, cand, k, rng_got, got, start)
        _top_k_reference(values, cand, k, rng_want, want, start)
        assert np.array_equal(got, want), (trial, n, k)
        assert rng_got.random() == rng_want.random()  # the same draws consumed


@pytest.mark.parametrize("levels", [1, 3, 1000])
def test_kth_smallest_is_the_partition_value_for_every_rank(levels: int) -> None:
    """Quickselect on indices: ``np.partition``'s value at every rank, runs of ties
    included; the indices are only permuted."""
    gen = np.random.default_rng(11)
    for _ in range(60):
        m = int(gen.integers(1, 90))
        values = gen.integers(0, levels, size=m + 5) / levels
        values[gen.random(m + 5) < 0.1] = -np.inf
        cand = gen.permutation(m + 5)[:m]
        want = np.sort(values[cand])
        for r in range(m):
            idx = cand.copy()
            assert engine.kth_smallest(values, idx, m, r) == want[r]
            assert np.array_equal(np.sort(idx), np.sort(cand))


def test_integers_below_draws_what_numpy_integers_draws() -> None:
    """The same integers as NumPy's ``rng.integers(0, m)``, interleaved with uniforms
    (the 32-bit outputs are buffered halves of the generator's 64-bit ones), and the same
    state after; ``m = 1`` draws nothing; ``m`` outside ``[1, 2^32)`` is refused."""
    gen = np.random.default_rng(13)
    for trial in range(50):
        sizes = [int(x) for x in gen.integers(1, 40, size=200)] + [1, 2**31 + 7, 2**32 - 1]
        mine, numpy_rng = np.random.default_rng(trial), np.random.default_rng(trial)
        for j, m in enumerate(sizes):
            assert engine.integers_below(mine, m) == numpy_rng.integers(0, m)
            if j % 3 == 0:
                assert mine.random() == numpy_rng.random()
        assert mine.random() == numpy_rng.random()
    for m in (0, 2**32):
        with pytest.raises(ValueError, match="integers_below"):
            engine.integers_below(np.random.default_rng(0), m)
