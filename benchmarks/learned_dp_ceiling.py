"""A learned policy fitted to the exact Bayes-optimal DP, evaluated exactly: the pipeline's ceiling.

On tiny Beta-Bernoulli families (one pull a step, a budget of T pulls) the optimum is
known exactly (:mod:`agents.bayesian.exact`). This script fits the arm-set network
(:class:`agents.learned.networks.ArmSetPolicy`) to the DP teacher with DAgger
(:func:`agents.learned.training.train` with ``imitate={"teacher": "dp", ...}`` and no
PPO: the states the policy visits itself, labelled with the DP's tied optimal arms), then
evaluates the greedy policy exactly over every posterior state
(:func:`agents.learned.exact.level_policy`), and prints its value beside the optimum,
KG* and uniform, each as the share of uniform's gap to the optimum it closes, with the
training cost (CPU seconds of the training process, without evaluation).

Usage: ``python benchmarks/learned_dp_ceiling.py [--families 3,1,20,1,1 ...] [--seed 0]
[--iterations 12] [--episodes 1024] [--epochs 40] [--hidden 128] [--layers 2]``; each
family is ``n,k,T,a,b``. Minutes per family on one core.
"""

from __future__ import annotations

import argparse
import time

import torch

from agents.bayesian.exact import BetaBernoulliDP
from agents.learned.exact import level_policy
from agents.learned.training import TrainConfig, train

FEATURES = ["post_gap", "post_std", "log_count", "fraction"]
DEFAULT_FAMILIES = ["3,1,20,1,1", "3,1,30,5,5", "4,2,20,5,5", "4,1,20,1,1"]


def fit_and_evaluate(n, k, budget, a, b, args) -> dict:
    """Train on the family, evaluate exactly; the figures of one row."""
    torch.set_num_threads(1)
    cpu = time.process_time()
    result = train(
        TrainConfig(
            "TopK-v0",
            {
                "instance": "beta-random",
                "instance_params": {"a": a, "b": b},
                "n_arms": n,
                "k": k,
                "budget": budget,
            },
            total_timesteps=0,
            num_envs=32,
            seed=args.seed,
            prior=(a, b),
            obs_options={"features": FEATURES},
            algo_kwargs={"policy_kwargs": {"hidden": args.hidden, "layers": args.layers}},
            imitate={
                "teacher": "dp",
                "iterations": args.iterations,
                "episodes": args.episodes,
                "epochs": args.epochs,
            },
            eval_episodes=0,
        ),
        log=None,
    )
    cpu = time.process_time() - cpu
    dp = BetaBernoulliDP(n, k, budget, a, b)
    v, kg, u = dp.solve(), dp.evaluate("kg"), dp.evaluate("uniform")
    learned = dp.evaluate(level_policy(result.model.policy, result.transform, budget, (a, b)))
    history = result.metadata["training"]["imitation"]["history"]
    return {
        "v": v,
        "kg": kg,
        "u": u,
        "learned": learned,
        "cpu": cpu,
        "states": history[-1]["states"],
        "agree": history[-1]["agreement_before_fit"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", default=DEFAULT_FAMILIES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--episodes", type=int, default=1024)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()
    print(
        f"DAgger on the DP teacher: {args.iterations} iterations x {args.episodes} episodes, "
        f"{args.epochs} epochs, arm-set network {args.layers} x {args.hidden}, seed {args.seed}, "
        f"features {FEATURES}"
    )
    head = (
        f"{'n':>2} {'k':>2} {'T':>3} {'prior':>9} {'V*':>9} {'KG*':>9} {'uniform':>9} "
        f"{'learned':>9} {'KG share':>9} {'learned sh':>10} {'states':>8} {'agree':>6} "
        f"{'train CPU s':>11}"
    )
    print(head)
    print("-" * len(head))
    for spec in args.families:
        n, k, budget = (int(x) for x in spec.split(",")[:3])
        a, b = (float(x) for x in spec.split(",")[3:])
        r = fit_and_evaluate(n, k, budget, a, b, args)
        gap = r["v"] - r["u"]
        print(
            f"{n:>2} {k:>2} {budget:>3} {f'B({a:g},{b:g})':>9} {r['v']:>9.6f} {r['kg']:>9.6f} "
            f"{r['u']:>9.6f} {r['learned']:>9.6f} {100 * (r['kg'] - r['u']) / gap:>8.2f}% "
            f"{100 * (r['learned'] - r['u']) / gap:>9.2f}% {r['states']:>8} {r['agree']:>6} "
            f"{r['cpu']:>11.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
