"""The GLR pair structure (agents.glr.fronts) on states of EB-TC episodes.

An EB-TC episode (empirical top k, transportation-cost challenger, beta = 1/2 with
tracking, forced exploration, as :class:`agents.glr.top_two.EBTC`) is played on the two-level
instance (k arms at 0.6, the others at 0.5; Bernoulli rewards, or Gaussian with
sigma = 0.5), n = 1000, budget 20n, K in {10, 100}, and its pulls are recorded. The
pulls are then replayed, and the script prints, in CPU time on one core
(``time.process_time``):

1. the cost per pull of the structure: one arm's update, the top set's repair and the
   query (:func:`agents.pairs.eb_query`);
2. the cost per pull of the full pass it replaces (the top set by a selection, then
   :func:`agents.glr.stopping.statistic` over the k (n - k) pairs), on every 50th state;
3. the sizes of the two fronts (classes of equal (mean, count)) and the number of
   distinct pull counts D, over the replayed states.

Usage::

    python benchmarks/glr_fronts_speed.py            # K = 10 and 100, both families
    python benchmarks/glr_fronts_speed.py --quick    # one replay, Bernoulli only
"""

from __future__ import annotations

import argparse
import math
import time

import numba
import numpy as np

from agents.glr import fronts, stopping
from bandit_envs.divergences import BERNOULLI, GAUSSIAN


@numba.njit
def _reward(family, mu, sigma, rng):
    if family == GAUSSIAN:
        return mu + sigma * rng.normal(0.0, 1.0)
    return 1.0 if rng.random() < mu else 0.0


@numba.njit
def ebtc_trace(family, sigma, mu, k, budget, rng):
    """The pulls of an EB-TC episode (every arm once, then the rule): arms and rewards."""
    n = mu.shape[0]
    arms = np.empty(budget, dtype=np.int64)
    rewards = np.empty(budget)
    counts = np.zeros(n, dtype=np.int64)
    sums = np.zeros(n)
    means = np.zeros(n)
    for a in range(n):
        x = _reward(family, mu[a], sigma, rng)
        arms[a], rewards[a] = a, x
        counts[a], sums[a], means[a] = 1, x, x
    in_top = np.zeros(n, dtype=np.int8)
    order = np.argsort(-means)
    for q in range(k):
        in_top[order[q]] = 1
    S, F = fronts.build(counts, means, in_top)
    leads = np.zeros(n)
    led = np.zeros(n)
    for t in range(n, budget):
        _z, i, j = fronts.eb_query(S, F, family, sigma, counts, means, rng)
        c_min, m = fronts.min_count_arm(S)
        if c_min < math.sqrt(t) - 0.5 * n:
            a = m
        else:
            leads[i] += 0.5
            if led[i] <= leads[i]:
                led[i] += 1.0
                a = i
            else:
                a = j
        x = _reward(family, mu[a], sigma, rng)
        arms[t], rewards[t] = a, x
        counts[a] += 1
        sums[a] += x
        means[a] = sums[a] / counts[a]
        fronts.pulled(S, counts, means, a)
    return arms, rewards


@numba.njit
def _init(n, arms, rewards):
    counts = np.zeros(n, dtype=np.int64)
    sums = np.zeros(n)
    for t in range(n):
        counts[arms[t]] += 1
        sums[arms[t]] += rewards[t]
    return counts, sums, sums / counts


@numba.njit
def replay_structure(family, sigma, n, k, arms, rewards, rng, sizes):
    """Update, repair and query at every pull after the first n; ``sizes[t]`` = (front
    of T, other front, D) if ``sizes`` has rows."""
    counts, sums, means = _init(n, arms, rewards)
    in_top = np.zeros(n, dtype=np.int8)
    order = np.argsort(-means)
    for q in range(k):
        in_top[order[q]] = 1
    S, F = fronts.build(counts, means, in_top)
    check = 0.0
    for t in range(n, arms.shape[0]):
        a = arms[t]
        counts[a] += 1
        sums[a] += rewards[t]
        means[a] = sums[a] / counts[a]
        fronts.pulled(S, counts, means, a)
        z, i, j = fronts.eb_query(S, F, family, sigma, counts, means, rng)
        check += z
        if sizes.shape[0] > 0:
            sizes[t, 0] = S[fronts.REG, fronts.R_NT]
            sizes[t, 1] = S[fronts.REG, fronts.R_NO]
            sizes[t, 2] = S[fronts.REG, fronts.R_D]
    return check


@numba.njit
def replay_full(family, sigma, n, k, arms, rewards, rng, every):
    """The full pass (top set, then the statistic over all pairs) at every ``every``-th
    pull: ``(number of passes, sum of Z)``."""
    counts, sums, means = _init(n, arms, rewards)
    cand = np.arange(n)
    top = np.empty(k, dtype=np.int64)
    in_top = np.zeros(n, dtype=np.int8)
    passes = 0
    check = 0.0
    for t in range(n, arms.shape[0]):
        a = arms[t]
        counts[a] += 1
        sums[a] += rewards[t]
        means[a] = sums[a] / counts[a]
        if t % every == 0:
            stopping.top_set(means, k, rng, cand, top, in_top)
            z, _i, _j = stopping.statistic(family, sigma, counts, means, top, in_top, rng)
            check += z
            passes += 1
    return passes, check


@numba.njit
def replay_updates_only(n, arms, rewards):
    """The bookkeeping common to both (counts and means), for the baseline."""
    counts, sums, means = _init(n, arms, rewards)
    for t in range(n, arms.shape[0]):
        a = arms[t]
        counts[a] += 1
        sums[a] += rewards[t]
        means[a] = sums[a] / counts[a]
    return means.sum()


def _cpu(fn, *args, repeats=1):
    best = math.inf
    for _ in range(repeats):
        start = time.process_time()
        fn(*args)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Bernoulli only, one replay")
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()
    n = args.n
    families = [(BERNOULLI, "bernoulli")] + ([] if args.quick else [(GAUSSIAN, "gaussian")])
    repeats = 1 if args.quick else 3
    sigma = 0.5
    print(f"n = {n}, budget 20n, two-level instance (0.6 / 0.5), CPU time per pull")
    print(
        f"{'family':10s} {'K':>4s} {'structure':>11s} {'full pass':>11s} {'ratio':>7s}"
        f" {'front T mean/max':>17s} {'front O mean/max':>17s} {'D mean/max':>11s}"
    )
    for family, fname in families:
        for k in (10, 100):
            mu = np.where(np.arange(n) < k, 0.6, 0.5)
            arms, rewards = ebtc_trace(family, sigma, mu, k, 20 * n, np.random.default_rng(k))
            pulls = arms.shape[0] - n
            none = np.zeros((0, 3), dtype=np.int64)
            rng = np.random.default_rng(0)
            replay_structure(family, sigma, n, k, arms, rewards, rng, none)  # compile
            replay_full(family, sigma, n, k, arms[: n + 100], rewards[: n + 100], rng, 50)
            replay_updates_only(n, arms, rewards)
            base = _cpu(replay_updates_only, n, arms, rewards, repeats=repeats)
            t_s = _cpu(
                replay_structure, family, sigma, n, k, arms, rewards, rng, none, repeats=repeats
            )
            start = time.process_time()
            passes, _ = replay_full(family, sigma, n, k, arms, rewards, rng, 50)
            t_f = time.process_time() - start
            per_s = (t_s - base) / pulls
            per_f = t_f / passes
            sizes = np.zeros((arms.shape[0], 3), dtype=np.int64)
            replay_structure(family, sigma, n, k, arms, rewards, rng, sizes)
            sz = sizes[n:]
            print(
                f"{fname:10s} {k:4d} {per_s * 1e9:8.0f} ns {per_f * 1e6:8.1f} us"
                f" {per_f / per_s:7.0f} {sz[:, 0].mean():10.1f} / {sz[:, 0].max():4d}"
                f" {sz[:, 1].mean():10.1f} / {sz[:, 1].max():4d}"
                f" {sz[:, 2].mean():5.1f} / {sz[:, 2].max():3d}"
            )


if __name__ == "__main__":
    main()
