"""The trainings of ``rl-baselines``: its algorithms, seeds and (model, preset) pairs.

Shared by the experiment's generator (:mod:`topk_bench.experiments.rl_baselines`) and
its hyper-parameter search (:mod:`topk_bench.experiments.rl_tuning`).
"""

from __future__ import annotations

__all__ = ["ALGOS", "SEEDS", "runs"]

#: The algorithms of the experiment, in table order.
ALGOS = ("ppo", "a2c", "dqn", "recurrent_ppo", "maskable_ppo")
#: Training seeds per (task, algorithm).
SEEDS = 5


def runs(seeds: int = SEEDS) -> list[tuple[str, str, str, int]]:
    """``(model, preset, algo, seed)`` of every training run, task by task."""
    from agents.learned.families import LADDER

    out = []
    for name, task in LADDER.items():
        batch = task.env_id == "TopK-Batch-v0"
        for algo in ALGOS:
            if algo == "dqn" and batch:
                continue  # DQN needs a Discrete action space
            preset = f"{name}-pbp" if algo == "maskable_ppo" and batch else name
            out += [(f"{algo}-{name}-s{seed}", preset, algo, seed) for seed in range(seeds)]
    return out
