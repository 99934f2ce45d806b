"""The stop of the cost-aware reference of the ``fixed-confidence`` task: a search over delta.

    python benchmarks/fixed_confidence_stop.py                    # 2,000 episodes per delta
    python benchmarks/fixed_confidence_stop.py --episodes 500 --deltas 0.5 0.7

The ``fixed-confidence`` task of the RL ladder (``agents.learned.families.LADDER``)
charges ``FIXED_CONFIDENCE_COST`` per batch and the answer's aggregate regret at the stop.
Its delta-correct references (LUCB, lil'UCB, Batch Racing, EB-TC) are built for an error
guarantee, not for this cost: on its 10 Beta(5, 5) arms none stops within the 100-batch
truncation. The cost-aware reference is top-two Thompson sampling with the family's prior
and its posterior stop (``bayes_ttts(a=5, b=5, delta=...)``: stop once the posterior
probability that the posterior top k is wrong is at most delta), delta chosen here for the
cost, as the learned policies' hyper-parameters are: on the validation episodes
(``VALIDATION_SEED0 + j``), never on the held-out ones.

For each delta the script prints the mean cost with its 95% interval (normal), the mean number of
batches, the share of truncated episodes, and the paired difference of cost with the best
delta (the same episodes); ``FIXED_CONFIDENCE_STOP_DELTA`` is the delta it picks.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agents.learned.evaluation import VALIDATION_SEED0, evaluate
from agents.learned.families import FIXED_CONFIDENCE_STOP_DELTA, LADDER, evaluation_env
from agents.registry import make

GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def costs(delta: float, episodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Cost and batches of ``bayes_ttts`` with the prior and ``delta`` on the task's
    validation episodes ``VALIDATION_SEED0 + j``, ``j < episodes``."""
    task = LADDER["fixed-confidence"]
    prior = task.kwargs["instance_params"]
    env_id, kwargs = evaluation_env(task.env_id, task.kwargs)
    agent = make("bayes_ttts", a=prior["a"], b=prior["b"], delta=delta)
    seeds = range(VALIDATION_SEED0, VALIDATION_SEED0 + episodes)
    results = evaluate(agent, env_id, kwargs, seeds)
    batches = np.array([r.batches for r in results], dtype=float)
    regret = np.array([r.aggregate_regret for r in results])
    return regret + task.cost_per_batch * batches, batches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--deltas", type=float, nargs="+", default=GRID)
    args = parser.parse_args()
    max_batches = LADDER["fixed-confidence"].kwargs["max_batches"]
    runs = {}
    for delta in args.deltas:
        start = time.process_time()
        runs[delta] = costs(delta, args.episodes)
        print(f"delta={delta:g}: {time.process_time() - start:.1f} CPU-s", flush=True)
    best = min(runs, key=lambda d: runs[d][0].mean())
    half = 1.96 / np.sqrt(args.episodes)
    print(
        f"\n{args.episodes} validation episodes per delta; best delta = {best:g} "
        f"(shipped: FIXED_CONFIDENCE_STOP_DELTA = {FIXED_CONFIDENCE_STOP_DELTA:g})\n"
    )
    print("| delta | mean cost ± 95% CI | mean batches | truncated | cost - best (paired) |")
    print("| --- | --- | --- | --- | --- |")
    for delta, (cost, batches) in runs.items():
        diff = cost - runs[best][0]
        print(
            f"| {delta:g} | {cost.mean():.4f} ± {half * cost.std(ddof=1):.4f} "
            f"| {batches.mean():.1f} | {np.mean(batches >= max_batches):.1%} "
            f"| {diff.mean():+.4f} ± {half * diff.std(ddof=1):.4f} |"
        )


if __name__ == "__main__":
    main()
