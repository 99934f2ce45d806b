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
validation) through ``agents.run_episode``. ``topk-bench train`` takes the same options.
"""

from __future__ import annotations

import argparse

from agents.learned import cli, training


def main(argv: list[str] | None = None) -> training.TrainResult:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_train_arguments(parser)  # --compare and --test-episodes included
    return cli.train_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    main()
