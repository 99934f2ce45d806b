"""Play episodes of both environments and print their results.

    python examples/play_episodes.py --episodes 5

``TopK-v0`` is played by a round-robin policy, ``TopK-Batch-v0`` by scripted agents
through :func:`agents.run_episode` (same seeds for every agent).
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import agents
import bandit_envs  # noqa: F401  (registers the ids)


def play_standard(episodes: int) -> None:
    env = gym.make("TopK-v0", instance="zhou2014-two-level", n_arms=20, k=5, budget=400)
    regrets = []
    for seed in range(episodes):
        obs, _ = env.reset(seed=seed)
        t = 0
        while True:
            obs, reward, terminated, truncated, info = env.step(t % 20)
            t += 1
            if terminated or truncated:
                break
        regrets.append(info["aggregate_regret"])
    print(
        f"TopK-v0, two-level n=20 k=5 budget=400, round robin: mean regret {np.mean(regrets):.4f}"
    )


def play_batch(episodes: int, names: list[str]) -> None:
    env = gym.make(
        "TopK-Batch-v0",
        instance="jun2016-sparse",
        n_arms=30,
        k=3,
        batch_size=8,
        repeat_limit=4,
        budget=600,
        answer="agent",
    )
    print("TopK-Batch-v0, jun2016-sparse n=30 k=3 b=8 r=4 budget=600:")
    print(f"{'agent':>14} {'regret':>8} {'misid':>6} {'pulls':>6} {'batches':>7}")
    for name in names:
        results = [agents.run_episode(env, agents.make(name), seed=s) for s in range(episodes)]
        print(
            f"{name:>14} {np.mean([r.aggregate_regret for r in results]):8.4f} "
            f"{np.mean([r.misidentified for r in results]):6.2f} "
            f"{np.mean([r.pulls for r in results]):6.0f} "
            f"{np.mean([r.batches for r in results]):7.1f}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5)
    args = parser.parse_args(argv)
    play_standard(args.episodes)
    fixed_budget = [
        n for n in agents.available() if "fixed_budget" in agents.agent_class(n).settings
    ]
    play_batch(args.episodes, [n for n in fixed_budget if n not in ("lil_ucb",)])


if __name__ == "__main__":
    main()
