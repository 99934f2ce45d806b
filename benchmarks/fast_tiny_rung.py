"""RL from reward against the exact Bayes optimum: the fast path on tiny families.

On tiny Beta-Bernoulli families (one pull a step, a budget of T pulls) the optimum is
known exactly (:mod:`agents.bayesian.exact`). This script trains the fast path
(:func:`agents.learned.fast.fast_train`, its defaults: the family's prior known, the
posterior reward; ``--reward env`` for the env's terminal reward) for ``--cpu``
CPU-seconds per family, then evaluates the greedy policy exactly over every posterior
state (:func:`agents.learned.exact.level_policy`) and prints its value beside the
optimum, KG* and uniform, each as the share of uniform's gap to the optimum it closes.

Usage: ``python benchmarks/fast_tiny_rung.py [--families 3,1,20,1,1 ...] [--cpu 120]
[--seed 0] [--reward auto|env] [--timesteps N --lr-schedule linear]``; each family is
``n,k,T,a,b``. ``--timesteps`` ends the training at that many steps (``--cpu`` still
capping it), so that ``--lr-schedule linear`` decays the step size to 0 there.
"""

from __future__ import annotations

import argparse

from agents.bayesian.exact import BetaBernoulliDP
from agents.learned.exact import level_policy
from agents.learned.fast import FastConfig, fast_train

DEFAULT_FAMILIES = ["3,1,20,1,1", "4,1,20,1,1", "4,2,20,5,5"]


def train_and_evaluate(n: int, k: int, budget: int, a: float, b: float, args) -> dict:
    """Train on the family, evaluate exactly; the figures of one row."""
    env = {
        "instance": "beta-random",
        "instance_params": {"a": a, "b": b},
        "n_arms": n,
        "k": k,
        "budget": budget,
    }
    result = fast_train(
        FastConfig(
            "TopK-v0",
            env,
            total_timesteps=args.timesteps or 10**12,
            lr_schedule=args.lr_schedule,
            max_cpu_seconds=args.cpu,
            seed=args.seed,
            reward=args.reward,
            eval_every=10**12,
            eval_episodes=0,
        ),
        log=None,
    )
    dp = BetaBernoulliDP(n, k, budget, a, b)
    v, kg, u = dp.solve(), dp.evaluate("kg"), dp.evaluate("uniform")
    learned = dp.evaluate(level_policy(result.model.policy, result.transform, budget, (a, b)))
    info = result.metadata["training"]
    return {"v": v, "kg": kg, "u": u, "learned": learned, **info}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", default=DEFAULT_FAMILIES)
    parser.add_argument("--cpu", type=float, default=120.0, help="training CPU-s per family")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reward", default="auto", choices=["auto", "env", "posterior"])
    parser.add_argument("--timesteps", type=int, help="training steps per family (default: --cpu)")
    parser.add_argument("--lr-schedule", default="constant", choices=["constant", "linear"])
    args = parser.parse_args()
    if args.lr_schedule == "linear" and not args.timesteps:
        parser.error("--lr-schedule linear decays the step size over --timesteps: give it")
    steps = f", {args.timesteps:,} steps" if args.timesteps else ""
    print(
        f"fast PPO, {args.cpu:.0f} CPU-s per family{steps}, step size {args.lr_schedule}, "
        f"reward {args.reward}, seed {args.seed}"
    )
    print("| n | k | T | prior | V* | KG* | uniform | fast PPO | KG share | PPO share | steps |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for spec in args.families:
        n, k, budget = (int(x) for x in spec.split(",")[:3])
        a, b = (float(x) for x in spec.split(",")[3:])
        r = train_and_evaluate(n, k, budget, a, b, args)
        gap = r["v"] - r["u"]
        print(
            f"| {n} | {k} | {budget} | B({a:g},{b:g}) | {r['v']:.6f} | {r['kg']:.6f} | "
            f"{r['u']:.6f} | {r['learned']:.6f} | {100 * (r['kg'] - r['u']) / gap:.1f}% | "
            f"{100 * (r['learned'] - r['u']) / gap:.1f}% | {r['timesteps']:,} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
