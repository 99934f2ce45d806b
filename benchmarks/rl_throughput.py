"""Environment steps per second during PPO training: native vector env vs sync vectorization.

    python benchmarks/rl_throughput.py                        # both presets, 1/8/64 envs
    python benchmarks/rl_throughput.py --presets batch --num-envs 8 --timesteps 8192
    python benchmarks/rl_throughput.py --fast one-pull,batch-budget   # fast path vs SB3

``--fast PRESETS`` prints only the side-by-side table of the fast path
(:mod:`agents.learned.fast`, PPO and A2C with their defaults) against the
stable-baselines3 path as ``topk-bench train`` runs it by default (PPO, arm-set
policy, 8 native envs, ``ALGO_DEFAULTS``), on the same preset in one run: environment
steps per CPU-second of this process, start-up excluded (the SB3 rate after a warm-up
update; the fast rate over its training loop, network and envs built), and the ratio.

For each preset (``agents.learned.families.PRESETS``), number of parallel envs and backend it
trains PPO (``agents.learned.training.train``, the arm-set policy, one torch thread, CPU) for
``--timesteps`` steps after a warm-up update and reports steps per second of wall-clock
time and of process CPU time (the latter is what to compare on a busy machine). The
rollout per update is the same for every ``N`` (``n_steps = rollout // N``), so the
gradient work per step is equal and the differences come from stepping the envs and
running the policy on batches of ``N`` observations. A second table steps the SB3
``VecEnv`` alone with random valid actions (no policy, no learning).

Backends (all behind SB3's ``VecEnv`` interface, observations normalised by
``VecFlatObservation``):

* ``native``: ``bandit_envs.sb3.make_sb3_vec_env`` (``TopKVectorEnv`` / ``TopKBatchVectorEnv``);
* ``sync``: ``gymnasium.vector.SyncVectorEnv`` through ``bandit_envs.sb3.SB3VecEnv``;
* ``dummy``: stable-baselines3's ``DummyVecEnv`` of ``gym.make`` envs.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from agents.learned.families import PRESETS
from agents.learned.training import TrainConfig, train
from agents.learned.vec_env import make_training_env

BACKENDS = ("native", "sync", "dummy")


def ppo_rate(
    preset: str, num_envs: int, backend: str, timesteps: int, rollout: int
) -> tuple[float, float]:
    """(wall, CPU) steps per second of PPO training, excluding the first update."""
    env_id, kwargs = PRESETS[preset]
    n_steps = max(rollout // num_envs, 4)
    algo_kwargs = {"n_steps": n_steps, "batch_size": min(512, n_steps * num_envs), "n_epochs": 5}
    warm = train(
        TrainConfig(
            env_id,
            kwargs,
            total_timesteps=n_steps * num_envs,
            num_envs=num_envs,
            backend=backend,
            algo_kwargs=algo_kwargs,
            eval_episodes=0,
        ),
        log=None,
    )
    model = warm.model
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=timesteps, reset_num_timesteps=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    steps = model.num_timesteps - n_steps * num_envs
    model.get_env().close()
    return steps / wall, steps / cpu


def sb3_default_rate(preset: str, timesteps: int) -> float:
    """CPU steps per second of ``topk-bench train``'s default SB3 PPO (8 envs), warm-up excluded."""
    env_id, kwargs = PRESETS[preset]
    warm = train(TrainConfig(env_id, kwargs, total_timesteps=2048, eval_episodes=0), log=None)
    model = warm.model
    cpu = time.process_time()
    model.learn(total_timesteps=timesteps, reset_num_timesteps=False)
    steps = model.num_timesteps - 2048
    rate = steps / (time.process_time() - cpu)
    model.get_env().close()
    return rate


def fast_default_rate(preset: str, algo: str, timesteps: int) -> float:
    """CPU steps per second of the fast path with its defaults (its training loop)."""
    from agents.learned.fast import FastConfig, fast_train

    result = fast_train(
        FastConfig(preset, algo=algo, total_timesteps=timesteps, eval_episodes=0), log=None
    )
    info = result.metadata["training"]
    return info["timesteps"] / info["cpu_seconds"]


def fast_table(presets: list[str], sb3_steps: int, fast_steps: int) -> list[dict]:
    """The side-by-side table of ``--fast`` (printed as it goes)."""
    print(
        f"env steps per CPU-second: SB3 PPO as topk-bench train runs it ({sb3_steps:,} steps "
        f"after a warm-up update) vs the fast path's defaults ({fast_steps:,} steps)"
    )
    print("| preset | SB3 PPO | fast PPO | fast A2C | fast PPO / SB3 | fast A2C / SB3 |")
    print("| --- | --- | --- | --- | --- | --- |")
    rows = []
    for preset in presets:
        sb3 = sb3_default_rate(preset, sb3_steps)
        ppo = fast_default_rate(preset, "ppo", fast_steps)
        a2c = fast_default_rate(preset, "a2c", fast_steps)
        rows.append({"preset": preset, "sb3": sb3, "fast_ppo": ppo, "fast_a2c": a2c})
        print(
            f"| {preset} | {sb3:,.0f} | {ppo:,.0f} | {a2c:,.0f} | {ppo / sb3:.0f}x | "
            f"{a2c / sb3:.0f}x |",
            flush=True,
        )
    return rows


def env_rate(preset: str, num_envs: int, backend: str, timesteps: int) -> tuple[float, float]:
    """(wall, CPU) steps per second of the VecEnv alone, random valid actions."""
    env_id, kwargs = PRESETS[preset]
    venv, _, _ = make_training_env(env_id, num_envs, seed=0, env_kwargs=kwargs, backend=backend)
    venv.reset()
    rng = np.random.default_rng(0)
    n = kwargs["n_arms"]
    steps = max(timesteps // num_envs, 1)
    if env_id == "TopK-v0":
        actions = rng.integers(0, n, size=(steps, num_envs))
    else:  # one pull per arm: always a valid batch
        actions = np.ones((steps, num_envs, n), dtype=np.int64)
    wall, cpu = time.perf_counter(), time.process_time()
    for t in range(steps):
        venv.step(actions[t])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    venv.close()
    return steps * num_envs / wall, steps * num_envs / cpu


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="standard,batch")
    parser.add_argument("--num-envs", default="1,8,64")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--timesteps", type=int, default=16_384, help="measured PPO steps per cell")
    parser.add_argument("--rollout", type=int, default=2048, help="steps per PPO update (all envs)")
    parser.add_argument(
        "--env-steps", type=int, default=64_000, help="steps per cell of the env-only table"
    )
    parser.add_argument(
        "--fast",
        default=None,
        metavar="PRESETS",
        help="only the fast path vs SB3 table, on these comma-separated presets",
    )
    parser.add_argument("--sb3-steps", type=int, default=20_480, help="--fast: SB3 steps")
    parser.add_argument("--fast-steps", type=int, default=4_194_304, help="--fast: fast steps")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.fast:
        return fast_table(args.fast.split(","), args.sb3_steps, args.fast_steps)
    presets = args.presets.split(",")
    sizes = [int(x) for x in args.num_envs.split(",")]
    backends = args.backends.split(",")
    rows = []
    print(
        f"PPO training, {args.timesteps} measured steps per cell, "
        f"rollout {args.rollout} steps/update, "
        f"1 torch thread"
    )
    print("| preset | N | " + " | ".join(f"{b} (wall / CPU)" for b in backends) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in backends) + " |")
    for preset in presets:
        for n in sizes:
            cells = []
            for b in backends:
                w, c = ppo_rate(preset, n, b, args.timesteps, args.rollout)
                rows.append(
                    {
                        "table": "ppo",
                        "preset": preset,
                        "num_envs": n,
                        "backend": b,
                        "wall": w,
                        "cpu": c,
                    }
                )
                cells.append(f"{w:,.0f} / {c:,.0f}")
            print(f"| {preset} | {n} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nVecEnv alone (random valid actions), {args.env_steps} steps per cell")
    print("| preset | N | " + " | ".join(f"{b} (wall / CPU)" for b in backends) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in backends) + " |")
    for preset in presets:
        for n in sizes:
            cells = []
            for b in backends:
                w, c = env_rate(preset, n, b, args.env_steps)
                rows.append(
                    {
                        "table": "env",
                        "preset": preset,
                        "num_envs": n,
                        "backend": b,
                        "wall": w,
                        "cpu": c,
                    }
                )
                cells.append(f"{w:,.0f} / {c:,.0f}")
            print(f"| {preset} | {n} | " + " | ".join(cells) + " |", flush=True)
    return rows


if __name__ == "__main__":
    main()
