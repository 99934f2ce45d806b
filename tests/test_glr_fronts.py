"""The GLR pair structure (agents.glr.fronts) against brute-force passes over all pairs."""

from __future__ import annotations

import math
import sys

import gymnasium as gym
import numba
import numpy as np
import pytest

import agents
import bandit_envs
from agents.glr import fronts as gp
from agents.glr import stopping
from bandit_envs import divergences as dv

FAMILIES = [(dv.BERNOULLI, 0.5), (dv.GAUSSIAN, 0.7)]


def _cost(family, sigma, counts, means, i, j) -> float:
    return dv.transport_cost(family, sigma, float(counts[i]), means[i], float(counts[j]), means[j])


def _front(arms, counts, means, sign):
    """The arms of ``arms`` not dominated on (sign * mean smaller, count smaller)."""
    out = []
    for a in arms:
        dominated = any(
            sign * means[b] <= sign * means[a]
            and counts[b] <= counts[a]
            and (means[b] != means[a] or counts[b] != counts[a])
            for b in arms
        )
        if not dominated:
            out.append(a)
    return out


def _min_pairs(family, sigma, counts, means, lead, other):
    """``(Z, set of minimising pairs)`` over ``lead`` x ``other`` (all their pairs)."""
    costs = {(i, j): _cost(family, sigma, counts, means, i, j) for i in lead for j in other}
    z = min(costs.values())
    return z, {p for p, c in costs.items() if c == z}


def reference_eb(family, sigma, counts, means, k):
    """The statistic of the module docstring: ``(Z, pairs it may return)``, and the
    all-pairs pass over the top set ``(Z_all, its minimisers)`` when the top set is unique."""
    n = len(counts)
    srt = np.sort(means)[::-1]
    if srt[k - 1] == srt[k]:
        tied = [a for a in range(n) if means[a] == srt[k - 1]]
        return (0.0, {(a, b) for a in tied for b in tied if a != b}), None
    top = [a for a in range(n) if means[a] >= srt[k - 1]]
    rest = [a for a in range(n) if means[a] < srt[k - 1]]
    fronts = _min_pairs(
        family, sigma, counts, means, _front(top, counts, means, 1), _front(rest, counts, means, -1)
    )
    return fronts, _min_pairs(family, sigma, counts, means, top, rest)


def reference_set(family, sigma, counts, means, lead):
    n = len(counts)
    others = [a for a in range(n) if a not in set(lead)]
    zero = {(i, j) for i in lead for j in others if means[i] <= means[j]}
    if zero:
        return (0.0, zero), None
    fronts = _min_pairs(
        family,
        sigma,
        counts,
        means,
        _front(list(lead), counts, means, 1),
        _front(others, counts, means, -1),
    )
    return fronts, _min_pairs(family, sigma, counts, means, list(lead), others)


def check_invariants(S, counts, means, k):
    """The layout of ``S`` (module docstring) for these counts and means."""
    n = len(counts)
    order, where, side, bnd, bc = S[gp.ORD], S[gp.WHR], S[gp.SIDE], S[gp.BND], S[gp.BCNT]
    nd = S[gp.REG, gp.R_D]
    assert sorted(order[:n]) == list(range(n))
    assert all(where[order[x]] == x for x in range(n))
    assert bnd[0] == 0 and bnd[2 * nd] == n
    assert all(bnd[p] <= bnd[p + 1] for p in range(2 * nd))
    assert all(bc[d] < bc[d + 1] for d in range(nd - 1))
    assert int((side[:n] == 0).sum()) == k
    for d in range(nd):
        assert bnd[2 * d + 2] > bnd[2 * d]  # no empty bucket
        for part in range(2):
            arms = order[bnd[2 * d + part] : bnd[2 * d + part + 1]]
            assert all(counts[a] == bc[d] and side[a] == part for a in arms)
            keys = [(means[a], a) for a in arms]
            assert keys == sorted(keys)


def _state(rng, n, grid, max_count):
    counts = rng.integers(1, max_count + 1, size=n).astype(np.int64)
    if grid:  # proportions S / N of few pulls: many equal means and equal (mean, count)
        means = rng.integers(0, counts + 1) / counts
    else:
        means = rng.uniform(0.05, 0.95, size=n)
    return counts, means


def _top_flags(means, k, rng):
    order = np.lexsort((rng.random(len(means)), -means))
    in_top = np.zeros(len(means), dtype=np.int8)
    in_top[order[:k]] = 1
    return in_top


def _check_eb(S, F, family, sigma, counts, means, k, rng, draws=1):
    (z_ref, pairs), full = reference_eb(family, sigma, counts, means, k)
    for _ in range(draws):
        z, i, j = gp.eb_query(S, F, family, sigma, counts, means, rng)
        assert z == z_ref
        assert (i, j) in pairs
    if full is not None:
        # the all-pairs pass: the same Z bit for bit, the same minimisers
        assert full[0] == z_ref
        assert full[1] == pairs
    return full is None


@pytest.mark.parametrize("family,sigma", FAMILIES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("grid", [True, False])
def test_eb_query_is_the_full_pass_on_random_states(family, sigma, k, grid) -> None:
    rng = np.random.default_rng(100 * k + family + 7 * grid)
    boundary_ties = 0
    for _ in range(150):
        n = int(rng.integers(k + 1, 14))
        counts, means = _state(rng, n, grid, 6)
        in_top = _top_flags(means, k, rng)
        S, F = gp.build(counts, means, in_top)
        check_invariants(S, counts, means, k)
        boundary_ties += _check_eb(S, F, family, sigma, counts, means, k, rng)
    if grid:
        assert boundary_ties >= 10  # the tied-boundary branch was exercised


def _reward(rng, grid, family, p):
    if grid:  # Bernoulli rewards
        return float(rng.random() < p)
    if family == dv.BERNOULLI:  # continuous rewards in [0, 1]
        return 0.5 * rng.random() + 0.5 * float(rng.random() < p)
    return rng.normal(p, 0.3)


@pytest.mark.parametrize("family,sigma", FAMILIES)
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("grid", [True, False])
def test_eb_query_after_random_pulls(family, sigma, k, grid) -> None:
    rng = np.random.default_rng(1000 + 10 * k + family + 3 * grid)
    for _ in range(6):
        n = int(rng.integers(k + 2, 16))
        p = rng.uniform(0.2, 0.8, size=n)
        counts = np.ones(n, dtype=np.int64)
        sums = np.array([_reward(rng, grid, family, p[a]) for a in range(n)])
        means = sums / counts
        S, F = gp.build(counts, means, _top_flags(means, k, rng))
        for _ in range(120):
            a = int(rng.integers(n)) if rng.random() < 0.5 else int(rng.integers(min(n, 3)))
            sums[a] += _reward(rng, grid, family, p[a])
            counts[a] += 1
            means[a] = sums[a] / counts[a]
            gp.pulled(S, counts, means, a)
            if rng.random() < 0.5:  # else eb_query restores the top set itself
                gp.repair_top(S, means)
            _check_eb(S, F, family, sigma, counts, means, k, rng)
            check_invariants(S, counts, means, k)
            srt = np.sort(means)[::-1]
            top_means = means[S[gp.SIDE, :n] == 0]
            assert top_means.min() >= srt[k - 1]  # a top-k set


def _all_minimiser_draws(n_pairs, rng, query, *args):
    """The pairs of ``40 n_pairs + 200`` draws of ``query(*args, rng)`` (see the callers)."""
    seen = set()
    for _ in range(40 * n_pairs + 200):
        _z, i, j = query(*args, rng)
        seen.add((i, j))
    return seen


@pytest.mark.parametrize("family,sigma", FAMILIES)
def test_every_minimising_pair_can_be_drawn(family, sigma) -> None:
    # A pair of m minimisers is missed in N uniform draws with probability
    # (1 - 1/m)^N <= exp(-N/m) = exp(-40 - 200/m): with at most 50 states a miss is
    # a bug, not chance.
    rng = np.random.default_rng(5 + family)
    multi = 0
    for _ in range(50):
        n = int(rng.integers(4, 12))
        k = int(rng.integers(1, n))
        counts, means = _state(rng, n, True, 3)
        S, F = gp.build(counts, means, _top_flags(means, k, rng))
        (z_ref, pairs), _full = reference_eb(family, sigma, counts, means, k)
        seen = _all_minimiser_draws(
            len(pairs), rng, gp.eb_query, S, F, family, sigma, counts, means
        )
        assert seen == pairs
        multi += len(pairs) > 1
    assert multi >= 20


def _hoeffding_cells(counts_by_cell, total, p, fail):
    """Every cell's frequency within Hoeffding's two-sided bound of ``p`` (Bonferroni over
    the cells, overall failure probability ``fail``)."""
    eps = math.sqrt(math.log(2 * len(counts_by_cell) / fail) / (2 * total))
    for c in counts_by_cell:
        assert abs(c / total - p) <= eps


def test_tied_boundary_pair_is_uniform_over_ordered_pairs() -> None:
    # five arms tied at the boundary of the top 2 (mean 0.5), one above, two below: the
    # pair is a uniform ordered pair of distinct tied arms (20 pairs, 1/20 each)
    counts = np.array([3, 2, 4, 2, 2, 5, 1, 3], dtype=np.int64)
    means = np.array([0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.0, 0.2])
    rng = np.random.default_rng(11)
    S, F = gp.build(counts, means, _top_flags(means, 2, rng))
    tally: dict[tuple[int, int], int] = {}
    draws = 40_000
    for _ in range(draws):
        z, i, j = gp.eb_query(S, F, dv.BERNOULLI, 0.5, counts, means, rng)
        assert z == 0.0
        tally[(i, j)] = tally.get((i, j), 0) + 1
    assert set(tally) == {(a, b) for a in range(1, 6) for b in range(1, 6) if a != b}
    _hoeffding_cells(list(tally.values()), draws, 1 / 20, 1e-6)


def test_tied_classes_are_uniform_over_arm_pairs() -> None:
    # T = {0, 1, 2}: arms 1, 2 one class (mean 0.6, 2 pulls); outside, arms 3, 4, 5 one
    # class (0.4, 2 pulls), arm 6 dominated (0.4, 3 pulls): six minimising pairs
    counts = np.array([1, 2, 2, 2, 2, 2, 3], dtype=np.int64)
    means = np.array([0.9, 0.6, 0.6, 0.4, 0.4, 0.4, 0.4])
    rng = np.random.default_rng(12)
    S, F = gp.build(counts, means, np.array([1, 1, 1, 0, 0, 0, 0], dtype=np.int8))
    tally: dict[tuple[int, int], int] = {}
    draws = 30_000
    for _ in range(draws):
        _z, i, j = gp.eb_query(S, F, dv.GAUSSIAN, 1.0, counts, means, rng)
        tally[(i, j)] = tally.get((i, j), 0) + 1
    assert set(tally) == {(a, b) for a in (1, 2) for b in (3, 4, 5)}
    _hoeffding_cells(list(tally.values()), draws, 1 / 6, 1e-6)


def _ordered_set_query(S, F, family, sigma, counts, means, lead, in_lead, rng):
    """:func:`gp.ordered_set_query` with the order of all arms built afresh."""
    G = gp.build_order(means)
    return gp.ordered_set_query(S, F, G, family, sigma, counts, means, lead, in_lead, rng)


@pytest.mark.parametrize("family,sigma", FAMILIES)
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("grid", [True, False])
@pytest.mark.parametrize("ordered", [False, True])
def test_set_query_is_the_full_pass(family, sigma, k, grid, ordered) -> None:
    rng = np.random.default_rng(2000 + 10 * k + family + 3 * grid)
    zero = 0
    query = _ordered_set_query if ordered else gp.set_query
    for _ in range(150):
        n = int(rng.integers(k + 1, 14))
        counts, means = _state(rng, n, grid, 6)
        S, F = gp.build(counts, means, _top_flags(means, k, rng))
        lead = np.sort(rng.choice(n, size=k, replace=False)).astype(np.int64)
        if rng.random() < 0.5:  # often the empirical top set, as for a concentrated posterior
            lead = np.sort(np.argsort(-means, kind="stable")[:k]).astype(np.int64)
        in_lead = np.zeros(n, dtype=np.int8)
        in_lead[lead] = 1
        (z_ref, pairs), full = reference_set(family, sigma, counts, means, lead)
        z, i, j = query(S, F, family, sigma, counts, means, lead, in_lead, rng)
        assert z == z_ref
        assert (i, j) in pairs
        if full is None:
            zero += 1
            seen = _all_minimiser_draws(
                len(pairs), rng, query, S, F, family, sigma, counts, means, lead, in_lead
            )
            assert seen == pairs
        else:
            assert full[0] == z_ref
            assert full[1] == pairs
    assert zero >= 20


@pytest.mark.parametrize("family,sigma", FAMILIES)
@pytest.mark.parametrize("grid", [True, False])
def test_tci_query_is_the_full_pass(family, sigma, grid) -> None:
    rng = np.random.default_rng(3000 + family + 3 * grid)
    for _ in range(150):
        n = int(rng.integers(2, 14))
        counts, means = _state(rng, n, grid, 6)
        i = int(rng.choice(np.flatnonzero(means == means.max())))  # a best arm
        lead = np.array([i], dtype=np.int64)
        in_lead = np.zeros(n, dtype=np.int8)
        in_lead[i] = 1
        S, F = gp.build(counts, means, in_lead)
        costs = {
            j: _cost(family, sigma, counts, means, i, j) + math.log(counts[j])
            for j in range(n)
            if j != i
        }
        best = min(costs.values())
        pairs = {(i, j) for j, c in costs.items() if c == best}
        seen = _all_minimiser_draws(
            len(pairs), rng, _tci_pair, S, F, family, sigma, counts, means, lead, in_lead
        )
        assert seen == pairs


def _tci_pair(S, F, family, sigma, counts, means, lead, in_lead, rng):
    return 0.0, int(lead[0]), gp.tci_query(S, F, family, sigma, counts, means, lead, in_lead, rng)


def test_front_sizes_and_min_count() -> None:
    # T = {0, 1, 2}: front (smaller mean, fewer pulls) = {1 (0.6, 2), 2 (0.7, 1)};
    # outside: front (larger mean, fewer pulls) = {3 (0.5, 1), 4 (0.55, 4)}
    counts = np.array([5, 2, 1, 1, 4, 6, 1], dtype=np.int64)
    means = np.array([0.8, 0.6, 0.7, 0.5, 0.55, 0.5, 0.1])
    S, F = gp.build(counts, means, np.array([1, 1, 1, 0, 0, 0, 0], dtype=np.int8))
    assert gp.front_sizes(S, means) == (2, 2)
    assert gp.min_count_arm(S) == (1, 2)
    out = np.empty(3, dtype=np.int64)
    gp.top_into(S, out)
    assert out.tolist() == [0, 1, 2]


def test_bad_states_are_refused() -> None:
    means = np.array([0.5, 0.4, 0.3])
    with pytest.raises(ValueError, match="count of at least 1"):
        gp.build(np.array([1, 0, 2]), means, np.array([1, 0, 0], dtype=np.int8))
    with pytest.raises(ValueError, match="between 1 and n - 1"):
        gp.build(np.array([1, 1, 2]), means, np.array([1, 1, 1], dtype=np.int8))


@pytest.mark.parametrize("family,sigma", FAMILIES)
def test_eb_query_restores_the_top_set(family, sigma) -> None:
    # T starts as the k worst arms: the query swaps them out, then answers as the full pass
    rng = np.random.default_rng(31 + family)
    for _ in range(50):
        n = int(rng.integers(3, 12))
        k = int(rng.integers(1, n))
        counts, means = _state(rng, n, True, 5)
        S, F = gp.build(counts, means, _top_flags(-means, k, rng))
        _check_eb(S, F, family, sigma, counts, means, k, rng)
        check_invariants(S, counts, means, k)
        assert means[S[gp.SIDE, :n] == 0].min() >= np.sort(means)[::-1][k - 1]


@numba.njit
def _drive(family, sigma, counts, sums, means, k, p, pulls, rng):
    """Random pulls on a compiled structure, querying after each: ``(Z, i, j)`` rows."""
    n = counts.shape[0]
    in_top = np.zeros(n, dtype=np.int8)
    order = np.argsort(-means)
    for q in range(k):
        in_top[order[q]] = 1
    S, F = gp.build(counts, means, in_top)
    out = np.empty((pulls, 3))
    for t in range(pulls):
        a = rng.integers(0, n) if rng.random() < 0.3 else order[rng.integers(0, 2 * k)]
        sums[a] += 1.0 if rng.random() < p[a] else 0.0
        counts[a] += 1
        means[a] = sums[a] / counts[a]
        gp.pulled(S, counts, means, a)
        z, i, j = gp.eb_query(S, F, family, sigma, counts, means, rng)
        out[t, 0], out[t, 1], out[t, 2] = z, i, j
    return out


@pytest.mark.parametrize("family,sigma", FAMILIES)
def test_compiled_use_on_a_larger_instance(family, sigma) -> None:
    # 60 arms, 30 blocks of 100 pulls from a compiled caller; the last query of each
    # block checked by brute force
    n, k = 60, 5
    rng = np.random.default_rng(21 + family)
    p = np.where(np.arange(n) < k, 0.6, 0.5)
    counts = np.ones(n, dtype=np.int64)
    sums = (rng.random(n) < p).astype(float)
    means = sums / counts
    for _ in range(30):
        out = _drive(family, sigma, counts, sums, means, k, p, 100, rng)
        (z_ref, pairs), _full = reference_eb(family, sigma, counts, means, k)
        assert out[-1, 0] == z_ref
        assert (int(out[-1, 1]), int(out[-1, 2])) in pairs


@numba.njit
def _full_pass_draws(family, sigma, counts, means, k, draws, rng):
    """The full pass as the agents played it: the top set (ties at random), then
    :func:`agents.glr.stopping.statistic` (ties by reservoir sampling in scan order)."""
    n = counts.shape[0]
    cand = stopping.new_candidates(n)
    top = np.empty(k, dtype=np.int64)
    in_top = np.zeros(n, dtype=np.int8)
    out = np.empty((draws, 2), dtype=np.int64)
    for d in range(draws):
        stopping.top_set(means, k, rng, cand, top, in_top)
        _z, i, j = stopping.statistic(family, sigma, counts, means, top, in_top, rng)
        out[d, 0], out[d, 1] = i, j
    return out


@pytest.mark.parametrize(
    "counts,means,k,pairs",
    [
        # five arms tied at the boundary of the top 2: a uniform ordered pair of them
        (
            [3, 2, 4, 2, 2, 5, 1, 3],
            [0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.0, 0.2],
            2,
            [(a, b) for a in range(1, 6) for b in range(1, 6) if a != b],
        ),
        # tied classes (arms 1, 2 and arms 3, 4, 5; arm 6 dominated): uniform arm pairs
        (
            [1, 2, 2, 2, 2, 2, 3],
            [0.9, 0.6, 0.6, 0.4, 0.4, 0.4, 0.4],
            3,
            [(a, b) for a in (1, 2) for b in (3, 4, 5)],
        ),
    ],
)
def test_the_full_pass_had_the_same_law_on_ties(counts, means, k, pairs) -> None:
    # the law eb_query realises (tests above) is the full pass's: both are checked
    # against the uniform law on the same pairs (Hoeffding, Bonferroni over the cells)
    counts = np.array(counts, dtype=np.int64)
    means = np.array(means)
    draws = 30_000
    out = _full_pass_draws(dv.BERNOULLI, 0.5, counts, means, k, draws, np.random.default_rng(3))
    tally: dict[tuple[int, int], int] = {}
    for i, j in out:
        tally[(int(i), int(j))] = tally.get((int(i), int(j)), 0) + 1
    assert set(tally) == set(pairs)
    _hoeffding_cells(list(tally.values()), draws, 1 / len(pairs), 1e-6)


def test_the_full_pass_had_the_same_law_on_a_leader_set() -> None:
    # leaders {0, 3} (means 0.9 and 0.3); zero-cost pairs: (3, 1), (3, 2), (3, 4) (means
    # 0.5, 0.4, 0.3 >= 0.3): uniform over them, for the full pass and for set_query
    counts = np.array([4, 2, 3, 5, 1, 2], dtype=np.int64)
    means = np.array([0.9, 0.5, 0.4, 0.3, 0.3, 0.1])
    lead = np.array([0, 3], dtype=np.int64)
    in_lead = np.zeros(6, dtype=np.int8)
    in_lead[lead] = 1
    pairs = [(3, 1), (3, 2), (3, 4)]
    rng = np.random.default_rng(4)
    S, F = gp.build(counts, means, in_lead)
    draws = 20_000
    G = gp.build_order(means)
    for query in ("full", "set", "ordered"):
        tally: dict[tuple[int, int], int] = {}
        for _ in range(draws):
            if query == "full":
                _z, i, j = stopping.statistic(dv.BERNOULLI, 0.5, counts, means, lead, in_lead, rng)
            elif query == "set":
                _z, i, j = gp.set_query(S, F, dv.BERNOULLI, 0.5, counts, means, lead, in_lead, rng)
            else:
                _z, i, j = gp.ordered_set_query(
                    S, F, G, dv.BERNOULLI, 0.5, counts, means, lead, in_lead, rng
                )
            tally[(int(i), int(j))] = tally.get((int(i), int(j)), 0) + 1
        assert set(tally) == set(pairs)
        _hoeffding_cells(list(tally.values()), draws, 1 / 3, 1e-6)


def _full_pass_twin(cls, index):
    """``cls`` forced onto the full pass (its parameter ``index`` zeroed)."""

    class Full(cls):
        def params(self):
            prm = super().params()
            assert prm[index] == 1.0
            prm[index] = 0.0
            return prm

    return Full


@pytest.mark.parametrize(
    "name,k",
    [
        ("eb_tc", 3),
        ("eb_tc", 1),
        ("eb_tci", 1),
        ("ttts", 1),
        ("track_and_stop", 1),
        ("frank_wolfe", 1),
        ("game_explorer", 1),
    ],
)
def test_pruned_and_full_passes_play_the_same_gaussian_episodes(name, k) -> None:
    # Gaussian rewards: no ties, so neither pass draws for ties and the episodes are the
    # same pull for pull (the same answer, pulls and final counts). (Not T3C: a sampled
    # leader set below an outside arm makes zero-cost ties, drawn differently; its law
    # on them: test_the_full_pass_had_the_same_law_on_a_leader_set.)
    cls = agents.agent_class(name)
    module = sys.modules[cls.kernel.py_func.__module__]  # where the kernel's prm layout is
    means = np.linspace(0.2, 0.8, 12)
    inst = bandit_envs.instances.from_means(means, k=k, distribution="gaussian", sigma=0.5)
    env = gym.make("TopK-v0", instance=inst, setting="fixed_confidence", max_batches=20_000)
    for seed in range(3):
        results = []
        for agent in (cls(), _full_pass_twin(cls, module.P_PRUNED)()):
            res = agents.run_episode(env, agent, seed=seed)
            results.append((res.recommendation.tolist(), res.pulls, env.unwrapped._counts.tolist()))
        assert results[0] == results[1]


@pytest.mark.parametrize("n", [40, 300])
def test_order_of_all_arms_follows_the_pulls(n) -> None:
    """After one-arm changes of mean (many ties: proportions of few pulls), ``G`` is the
    (mean, arm) order built afresh, each arm's place is where it is listed, and each
    place's run of equal means starts where the means say (n = 300: the run starts'
    bitset spans five words, moves cross them)."""
    rng = np.random.default_rng(21)
    counts, means = _state(rng, n, True, 4)
    G = gp.build_order(means)
    for _ in range(3000):
        a = int(rng.integers(0, n))
        counts[a] += 1
        means[a] += (float(rng.integers(0, 2)) - means[a]) / counts[a]
        gp.order_pulled(G, means, a)
        want = np.lexsort((np.arange(n), means))
        assert np.array_equal(G[gp.G_ORD, :n], want)
        assert np.array_equal(G[gp.G_POS, want], np.arange(n))
        m = means[want]
        first = [p if p == 0 or m[p - 1] != m[p] else 0 for p in range(n)]
        for p in range(1, n):
            first[p] = first[p] if m[p - 1] != m[p] else first[p - 1]
        assert [gp.run_start(G, p) for p in range(n)] == first


def test_run_start_bits_shift_by_one_place_over_any_range() -> None:
    """``_bits_down`` / ``_bits_up`` move bits ``lo..hi`` one place, words crossed, every
    other bit kept (against the same shift on a list of bits)."""
    rng = np.random.default_rng(23)
    n = 260
    for _ in range(500):
        bits = np.zeros(64 * (n // 64 + 4), dtype=np.uint8)
        bits[:n] = rng.integers(0, 2, size=n)
        words = np.packbits(bits, bitorder="little").view("<i8").astype(np.int64)
        lo, hi = sorted(int(x) for x in rng.integers(0, n - 1, size=2))
        want = bits.copy()
        if rng.random() < 0.5:
            want[lo:hi] = bits[lo + 1 : hi + 1]
            gp._bits_down(words, lo, hi)
        else:
            want[lo + 1 : hi + 1] = bits[lo:hi]
            gp._bits_up(words, lo, hi)
        got = [(int(words[p >> 6]) >> (p & 63)) & 1 for p in range(n)]
        assert got == want[:n].tolist(), (lo, hi)


def test_ordered_zero_pairs_are_uniform_with_leaders_in_tied_runs() -> None:
    # leaders {1, 3, 4}: arm 1 (0.5) ties arms 2 and 5 outside; arms 3, 4 (0.2) tie arm 6
    # outside. Zero-cost pairs: (1, 2), (1, 5), (1, 0) and (3 or 4, each of 0, 2, 5, 6):
    # 3 + 8 = 11 pairs, 1/11 each (Hoeffding over the cells)
    counts = np.array([2, 2, 4, 5, 1, 2, 3], dtype=np.int64)
    means = np.array([0.9, 0.5, 0.5, 0.2, 0.2, 0.5, 0.2])
    lead = np.array([1, 3, 4], dtype=np.int64)
    in_lead = np.zeros(7, dtype=np.int8)
    in_lead[lead] = 1
    pairs = {(1, j) for j in (0, 2, 5)} | {(i, j) for i in (3, 4) for j in (0, 2, 5, 6)}
    S, F = gp.build(counts, means, in_lead)
    G = gp.build_order(means)
    rng = np.random.default_rng(22)
    draws = 40_000
    tally: dict[tuple[int, int], int] = {}
    for _ in range(draws):
        z, i, j = gp.ordered_set_query(S, F, G, dv.GAUSSIAN, 1.0, counts, means, lead, in_lead, rng)
        assert z == 0.0
        tally[(int(i), int(j))] = tally.get((int(i), int(j)), 0) + 1
    assert set(tally) == pairs
    _hoeffding_cells(list(tally.values()), draws, 1 / len(pairs), 1e-6)


@pytest.mark.parametrize("m, n", [(1, 3), (5, 9), (24, 30), (25, 30), (100, 1000), (700, 5000)])
def test_leader_places_are_sorted(m, n) -> None:
    """Insertion (a few places) and radix sort (more; one, two and three digits)."""
    rng = np.random.default_rng(m + n)
    for _ in range(20):
        a = rng.choice(n, size=m, replace=False).astype(np.int64)
        want = np.sort(a)
        tmp, cnt = np.empty(m, np.int64), np.empty(gp._RADIX, np.int64)
        gp._sort_places(a, tmp, cnt, m, n)
        assert np.array_equal(a, want)
