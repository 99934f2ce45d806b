"""RoundRobin (Jun et al. Alg. 1) by water filling equals the pull-by-pull loop."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scheduling import round_robin


def loop_round_robin(counts, caps, total):
    a = np.zeros_like(caps)
    for _ in range(min(total, int(caps.sum()))):
        open_ = np.flatnonzero(a < caps)
        j = open_[np.argmin(counts[open_] + a[open_])]
        a[j] += 1
    return a


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20), st.integers(0, 6)), min_size=1, max_size=12),
    st.integers(0, 40),
    st.integers(0, 10**6),
)
def test_water_filling_matches_the_loop_up_to_ties(pairs, total, seed) -> None:
    counts = np.array([c for c, _ in pairs], dtype=np.int64)
    caps = np.array([c for _, c in pairs], dtype=np.int64)
    got = round_robin(counts, caps, total, np.random.default_rng(seed))
    want = loop_round_robin(counts, caps, total)
    assert got.sum() == want.sum() and np.all(got <= caps) and np.all(got >= 0)
    # same multiset of final levels among arms that got pulls => same allocation up to ties
    assert sorted((counts + got).tolist()) == sorted((counts + want).tolist())
    assert np.array_equal(round_robin(counts, caps, total, None), want)  # lowest index first
