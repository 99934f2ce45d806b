"""The cost of one posterior top-k set draw on the posteriors T3C reaches.

T3C (:mod:`agents.glr.top_two`) draws its leader set, the top k of one sample of the
Beta posteriors, by :func:`agents.engine.posterior_top_set.sample_top_set` at every pull.
This script plays T3C on ``agent_speed``'s section-1 setting (two-level instance,
n = 1000, Bernoulli rewards) with budgets of 5n, 10n and 20n, takes the posteriors at
the end of each episode (``Beta(1 + S_a, 1 + N_a - S_a)``), builds the sampler's state
for them (T3C's band) and prints the CPU time per set draw (``time.process_time``,
one core), for K = 10 and K = 100.

Set against T3C's whole pull (``python benchmarks/agent_speed.py --agents t3c
--sections 1``), the difference is what the rest of the pull costs: the bound on T3C's
speed with a set draw that cost nothing (docs/performance.md).

Usage::

    python benchmarks/top_set_draw_speed.py
    python benchmarks/top_set_draw_speed.py --draws 20000   # quicker
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numba
import numpy as np

import agents
import bandit_envs  # noqa: F401  (registers the envs)
from agents.engine import posterior_top_set

N_ARMS = 1000


@numba.njit
def _draws(pa, pb, k, st, rng, members, draws):
    check = 0
    for _ in range(draws):
        posterior_top_set.sample_top_set(pa, pb, k, st, rng, members)
        check += members[0]
    return check


def t3c_posteriors(k: int, budget: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The Beta posteriors at the end of a T3C episode of ``budget`` pulls."""
    env = gym.make(
        "TopK-Batch-v0",
        instance="zhou2014-two-level",
        n_arms=N_ARMS,
        k=k,
        budget=budget,
        batch_size=1,
        repeat_limit=1,
        answer="agent",
    )
    agents.run_episode(env, agents.make("t3c"), seed=seed)
    counts = env.unwrapped._counts.astype(float)
    sums = env.unwrapped._sums.astype(float)
    return 1.0 + sums, 1.0 + counts - sums


def us_per_draw(pa: np.ndarray, pb: np.ndarray, k: int, draws: int) -> float:
    st = posterior_top_set.new_state(pa.shape[0])
    posterior_top_set.set_band(st, *posterior_top_set.T3C_BAND)
    posterior_top_set.update(pa, pb, k, st, np.arange(pa.shape[0]))
    rng = np.random.default_rng(0)
    members = np.zeros(k, dtype=np.int64)
    _draws(pa, pb, k, st, rng, members, 10)  # (compiles)
    start = time.process_time()
    _draws(pa, pb, k, st, rng, members, draws)
    return (time.process_time() - start) / draws * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=200_000, help="set draws per state")
    args = parser.parse_args()
    print(f"us per top-k set draw, T3C's posteriors, n = {N_ARMS} (CPU time)")
    print(f"{'K':>4} {'after 5n':>9} {'after 10n':>10} {'after 20n':>10} {'mean':>7}")
    for k in (10, 100):
        cells = [
            us_per_draw(*t3c_posteriors(k, factor * N_ARMS, seed=1), k, args.draws)
            for factor in (5, 10, 20)
        ]
        row = " ".join(f"{c:>9.2f} " for c in cells)
        print(f"{k:>4} {row}{np.mean(cells):>7.2f}")


if __name__ == "__main__":
    main()
