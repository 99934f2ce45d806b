"""Training and playing speed of each RL algorithm on each task of the ladder (CPU time).

    python benchmarks/rl_ladder_speed.py                      # every algorithm x task, 8192 steps
    python benchmarks/rl_ladder_speed.py --tasks one-pull --algos ppo,dqn --timesteps 20000

For each task of ``agents.learned.families.LADDER`` and each algorithm that trains on it
(the ``rl-baselines`` grid: PPO, A2C and RecurrentPPO on the task's own form, DQN on the
one-pull tasks, MaskablePPO on the one-pull tasks and on the ``TopK-PullByPull-v0`` form
of the batch tasks) it trains with the default hyper-parameters (8 envs, one torch
thread) for ``--timesteps`` environment steps after a warm-up of one rollout, and
prints the training steps per CPU second (process time: what holds on a shared
machine), then plays ``--episodes`` episodes of the trained policy through
``PolicyAgent`` on the benchmark form of the task and prints the CPU milliseconds per
episode. These are the figures ``rl-baselines`` sizes its step budgets from.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import torch

from agents.learned.families import LADDER
from agents.learned.training import TrainConfig, train
from agents.runner import run_episode


def grid(tasks: list[str], algos: list[str]) -> list[tuple[str, str]]:
    """(preset, algo) pairs of the rl-baselines grid restricted to ``tasks`` and ``algos``."""
    out = []
    for name in tasks:
        task = LADDER[name]
        for algo in algos:
            if algo == "dqn" and task.env_id != "TopK-v0":
                continue
            preset = task.pull_by_pull if algo == "maskable_ppo" and task.pull_by_pull else name
            out.append((preset, algo))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(LADDER))
    parser.add_argument("--algos", default="ppo,a2c,dqn,recurrent_ppo,maskable_ppo")
    parser.add_argument("--timesteps", type=int, default=8192)
    parser.add_argument("--episodes", type=int, default=20)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print("| task (form) | algo | training steps per CPU s | PolicyAgent CPU ms per episode |")
    print("| --- | --- | --- | --- |")
    for preset, algo in grid(args.tasks.split(","), args.algos.split(",")):
        config = TrainConfig(preset, algo=algo, total_timesteps=args.timesteps, eval_episodes=0)
        cpu = time.process_time()
        result = train(config, log=None)
        rate = result.timesteps / (time.process_time() - cpu)
        agent = result.agent(deterministic=True)
        env_id, kwargs = result.metadata["evaluation_env"].values()
        env = gym.make(env_id, **kwargs)
        cpu = time.process_time()
        for seed in range(args.episodes):
            run_episode(env, agent, seed=seed)
        ms = 1000 * (time.process_time() - cpu) / args.episodes
        print(f"| {preset} | {algo} | {rate:,.0f} | {ms:.0f} |", flush=True)


if __name__ == "__main__":
    main()
