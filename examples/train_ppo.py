"""Train PPO (or A2C, DQN) on a TopK family, save it, and compare it with scripted agents.

    python examples/train_ppo.py                                   # ~20k steps, standard family
    python examples/train_ppo.py --preset batch --timesteps 500000 --eval-every 100000 \\
        --progress --out models/ppo_batch --compare uniform,sar,batch_sar,optmai
    python examples/train_ppo.py --algo dqn --env budget=100       # DQN: TopK-v0 only

Presets (``agents.learned.PRESETS``): 10 Bernoulli arms with Beta(5, 5) means drawn
per episode and shuffled, k = 3, 200 pulls; ``standard`` pulls one arm per step
(``TopK-v0``), ``batch`` pulls b = 10 per step with at most r = 5 per arm
(``TopK-Batch-v0``, ``invalid_action="project"``). Training runs on the native vector
env (``bandit_envs.sb3``) on the CPU. The observation is normalised by
``bandit_envs.wrappers.FlatObservation``; the model file stores its config, so

    agents.learned.load_policy("models/ppo_batch.zip")   # an agents.PolicyAgent

plays it with the training observation. ``--compare`` evaluates the policy and the
named scripted agents on the same held-out seeds (disjoint from training and
validation) through ``agents.run_episode``.
"""

from __future__ import annotations

import argparse

import agents
from agents.learned import cli, evaluation, training


def main(argv: list[str] | None = None) -> training.TrainResult:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_train_arguments(parser)
    parser.add_argument(
        "--compare", default="", help="comma-separated scripted agents to compare with"
    )
    parser.add_argument(
        "--test-episodes", type=int, default=200, help="held-out episodes for --compare"
    )
    args = parser.parse_args(argv)
    result = cli.train_from_args(args)
    if args.compare:
        env_id, env_kwargs = result.metadata["env_id"], result.metadata["env_kwargs"]
        players: dict = {args.algo: result.agent()}
        for name in filter(None, args.compare.split(",")):
            players[name] = lambda name=name: agents.make(name)
        print(f"\n{args.test_episodes} held-out episodes, same seeds for every agent:")
        print(evaluation.TABLE_HEADER)
        evaluation.compare(players, env_id, env_kwargs, args.test_episodes, log=print)
    return result


if __name__ == "__main__":
    main()
