"""MaskablePPO (sb3-contrib) on the batch model, composed pull by pull: no invalid action.

    python examples/maskable_ppo.py                       # 10k steps, about a minute
    python examples/maskable_ppo.py --timesteps 200000 --episodes 500

``TopK-PullByPull-v0`` is ``TopK-Batch-v0``'s problem (here the ``batch`` family of
``learned-vs-scripted``: 10 Bernoulli arms with Beta(5, 5) means, k = 3, 200 pulls in
batches of b = 10, at most r = 5 per arm) with each batch composed one pull per step
and an answer step of k picks. Its ``action_masks()`` state exactly which sub-steps
are valid, so ``MaskablePPO`` trains and plays in ``invalid_action="raise"`` mode:
an invalid action would raise, and no action is ever projected. The trained policy
and scripted agents (on ``TopK-Batch-v0``) then play the same held-out instances
(the arm means of a seed are the same in both envs).
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import agents
import bandit_envs  # noqa: F401  (registers the ids)

FAMILY = {
    "instance": "beta-random",
    "instance_params": {"a": 5.0, "b": 5.0},
    "n_arms": 10,
    "k": 3,
    "budget": 200,
    "batch_size": 10,
    "repeat_limit": 5,
    "answer": "agent",
    "invalid_action": "raise",
}
TEST_SEED0 = 200_000_000  # held-out seeds (agents.learned.evaluation.TEST_SEED0)


def play_policy(model, kwargs: dict, seeds: range) -> list[float]:
    """Regret of the masked policy per episode (sub-steps chosen among the valid ones)."""
    env = gym.make("TopK-PullByPull-v0", **kwargs)
    regrets = []
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        while True:
            mask = env.unwrapped.action_masks()
            action, _ = model.predict(obs, action_masks=mask, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                regrets.append(info["aggregate_regret"])
                break
    return regrets


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=10_000, help="training sub-steps")
    parser.add_argument("--episodes", type=int, default=100, help="held-out episodes")
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare", default="uniform,batch_sar", help="scripted agents")
    args = parser.parse_args(argv)

    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(1)
    venv = make_vec_env(
        "TopK-PullByPull-v0",
        n_envs=args.num_envs,
        seed=args.seed,
        env_kwargs={**FAMILY, "render_mode": None},  # make_vec_env would ask for rgb_array
    )
    model = MaskablePPO("MultiInputPolicy", venv, n_steps=256, seed=args.seed, device="cpu")
    model.learn(args.timesteps)  # MaskablePPO reads each env's action_masks()

    seeds = range(TEST_SEED0, TEST_SEED0 + args.episodes)
    results = {"maskable_ppo": float(np.mean(play_policy(model, FAMILY, seeds)))}
    batch_env = gym.make("TopK-Batch-v0", **FAMILY)  # the same arm means for the same seeds
    for name in filter(None, args.compare.split(",")):
        agent = agents.make(name)
        regrets = [agents.run_episode(batch_env, agent, seed=s).aggregate_regret for s in seeds]
        results[name] = float(np.mean(regrets))
    print(f"mean aggregate regret over {args.episodes} held-out episodes:")
    for name, regret in results.items():
        print(f"  {name:14s} {regret:.4f}")
    return results


if __name__ == "__main__":
    main()
