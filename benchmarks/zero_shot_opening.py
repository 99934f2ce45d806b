"""Whether an opening of equal pulls closes ``zero_shot``'s gap to OptMAI at n = 1,000.

In ``zhou2014-fig1`` (n = 1,000 Bernoulli arms, budget Q = 20n, 50n, 100n) OptMAI
(Zhou, Chen & Li, ICML 2014) has a lower aggregate regret than ``zero_shot`` at 12 of the
36 points. OptMAI spends its budget in rounds of equal pulls over the surviving arms;
``zero_shot`` pulls every arm once and then lets its score choose. This benchmark plays
``zero_shot`` with an opening of equal pulls (``agents.make("zero_shot",
opening=s)``: a share ``s`` of the budget spent pulling every arm equally before the
score decides; the shipped agent has ``s = 0``) beside OptMAI (beta = 0.8 and 0.9) on
paired episodes of four of those points, and prints per point and agent the mean
aggregate regret (Zhou et al. eq. (1)) with its standard error, and each opening's paired
difference to ``s = 0``.

Usage::

    python benchmarks/zero_shot_opening.py                 # 40 episodes per point
    python benchmarks/zero_shot_opening.py --episodes 20 --openings 0,0.2,0.5
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import agents
import bandit_envs  # noqa: F401  (registers the envs)
from agents.runner import run_episode

#: (instance, k, budget per arm): points of zhou2014-fig1 (n = 1,000).
POINTS = (
    ("uniform-random", 10, 20),
    ("uniform-random", 50, 20),
    ("uniform-random", 100, 50),
    ("zhou2014-two-level", 200, 100),
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--openings", default="0,0.1,0.2,0.3,0.5")
    args = parser.parse_args(argv)
    openings = [float(s) for s in args.openings.split(",")]
    if openings[0] != 0.0:
        openings.insert(0, 0.0)  # the shipped agent: the reference of the differences
    print(f"{args.episodes} paired episodes per point; aggregate regret, mean ± s.e.")
    print(
        "| point | OptMAI(0.8) | OptMAI(0.9) | "
        + " | ".join(f"opening {s:g}" for s in openings)
        + " |"
    )
    print("| --- " * (3 + len(openings)) + "|")
    for instance, k, per_arm in POINTS:
        env = gym.make(
            "TopK-Batch-v0",
            instance=instance,
            n_arms=1000,
            k=k,
            budget=per_arm * 1000,
            batch_size=None,
            answer="agent",
            paired=True,
        )
        players = [
            agents.make("optmai", beta=0.8),
            agents.make("optmai", beta=0.9),
            *(agents.make("zero_shot", opening=s, seed=0) for s in openings),
        ]
        seeds = range(args.episodes)
        regret = np.array(
            [[run_episode(env, a, seed=s).aggregate_regret for s in seeds] for a in players]
        )
        se = regret.std(axis=1, ddof=1) / np.sqrt(args.episodes)
        cells = [f"{m:.5f} ± {e:.5f}" for m, e in zip(regret.mean(axis=1), se, strict=True)]
        base = regret[2]
        for j in range(3, len(players)):
            diff = regret[j] - base
            half = 1.96 * diff.std(ddof=1) / np.sqrt(args.episodes)
            cells[j] += f" ({diff.mean():+.5f} ± {half:.5f})"
        print(f"| {instance}, k = {k}, Q = {per_arm}n | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
