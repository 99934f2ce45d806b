"""Speed of ``zero_shot`` and what its blocks of pulls cost in play.

Prints, in CPU time on one core (``time.process_time``), after one warm-up episode:

1. pulls per second of ``zero_shot`` through ``agents.run_episode`` on ``TopK-Batch-v0``,
   Unif[0, 1] Bernoulli means, n in {100, 1000, 10000}, k = n/100 (at least 2), budget
   20n, ``batch_size=None`` and (b, r) = (16, 4) (target at n = 1,000: 1e5 pulls/s);
   ``kg`` (KG* with the flat prior) beside it at n <= 1,000 for scale;
2. the block size's effect on play: mean aggregate regret (and its standard error) over
   ``--episodes`` paired episodes of ``zero_shot`` as shipped (``BLOCK`` = 32) and with one
   decision per pull (``agents.make("zero_shot", block=10**9)``), on Unif[0, 1] means,
   n = 200, k = 10, budget 20n.

Usage::

    python benchmarks/zero_shot_speed.py               # both sections
    python benchmarks/zero_shot_speed.py --sections 1
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import agents
import bandit_envs  # noqa: F401  (registers the envs)


def _env(n: int, budget_per_arm: int, b: int | None, r: int | None) -> gym.Env:
    return gym.make(
        "TopK-Batch-v0",
        instance="uniform-random",
        n_arms=n,
        k=max(2, n // 100),
        budget=budget_per_arm * n,
        batch_size=b,
        repeat_limit=r,
        answer="agent",
        paired=True,
        invalid_action="raise",
    )


def pulls_per_second(name: str, env: gym.Env, episodes: int) -> float:
    agent = agents.make(name, seed=0)
    agents.run_episode(env, agent, seed=10_000)  # warm-up (compile or load)
    pulls = 0
    start = time.process_time()
    for s in range(episodes):
        pulls += agents.run_episode(env, agent, seed=s).pulls
    return pulls / (time.process_time() - start)


def section_speed() -> None:
    print("1. pulls per CPU-second (budget 20n, Unif[0, 1] means, k = n/100)")
    print(f"{'n':>6} {'batch model':>14} {'zero_shot':>11} {'kg':>9}")
    for n, eps in ((100, 20), (1000, 4), (10_000, 1)):
        for b, r in ((None, None), (16, 4)):
            env = _env(n, 20, b, r)
            zs = pulls_per_second("zero_shot", env, eps)
            kg = pulls_per_second("kg", env, 1) if n <= 1000 and b is None else float("nan")
            model = "one pull" if b is None else f"b={b}, r={r}"
            print(f"{n:>6} {model:>14} {zs:>11.3g} {kg:>9.3g}")


def regrets(episodes: int, block: int) -> tuple[float, float]:
    env = _env(200, 20, None, None)
    agent = agents.make("zero_shot", block=block, seed=0)
    values = [agents.run_episode(env, agent, seed=s).aggregate_regret for s in range(episodes)]
    return float(np.mean(values)), float(np.std(values, ddof=1) / np.sqrt(len(values)))


def section_block(episodes: int) -> None:
    print(f"2. aggregate regret, n = 200, k = 10, budget 20n, {episodes} paired episodes")
    regrets(1, 32)  # warm-up (compile or load)
    for block, what in ((32, "shipped"), (10**9, "one decision per pull")):
        start = time.process_time()
        mean, se = regrets(episodes, block)
        cpu = time.process_time() - start
        print(f"   block = {block:g} ({what}): {mean:.5f} +- {se:.5f}  ({cpu:.1f} CPU s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sections", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--episodes", type=int, default=200)
    args = parser.parse_args()
    if 1 in args.sections:
        section_speed()
    if 2 in args.sections:
        section_block(args.episodes)


if __name__ == "__main__":
    main()
