"""The room above KG* on ``learned-vs-scripted``: the rollout of KG* against KG*, paired.

The family is the shipped experiment's "one pull per step" point (10 Bernoulli arms,
means i.i.d. Beta(5, 5) per episode, k = 3, a budget of 200 pulls, aggregate regret).
KG* (the ``kg`` agent, prior Beta(5, 5)) and its rollout
(:class:`agents.bayesian.kg_rollout.KGRollout`: each pull the arm of largest Q-value under
a KG* continuation, estimated from ``--sims`` simulations with common random numbers over
the ``--top`` arms of largest KG* value) play the same episodes: the environment seeds of
the shipped experiment's runs (:func:`topk_bench.seeds.env_seed`; paired rewards, so the
``l``-th pull of an arm gives both agents the same reward), KG* with its agent seeds there.

Two estimators of the gain ``E[regret of KG*] - E[regret of the rollout]``, per episode:

* ``regret``: the difference of the aggregate regrets (true means);
* ``posterior``: ``(V_R - V_KG) / k``, ``V`` the sum of the k largest posterior means at the
  end. Both have the same expectation: the answer ``A`` is the posterior top k, so
  ``E[sum of theta over A | the agent's observations] = V`` (the means are drawn from the
  prior the posterior is computed with), hence ``E[regret] = (E[sum of the top-k means] -
  E[V]) / k`` for each agent, and the first term is the same for both. The paired reward
  streams make the two posteriors share most of their observations;
* ``combined``: ``regret + c (posterior - regret)``, ``c`` the coefficient that minimises
  the sample variance (a control variate of mean zero, ``posterior - regret``; the
  coefficient estimated from the same episodes, a bias of order 1 / episodes).

Printed: per estimator the mean with a 95% normal interval (1.96 standard errors), the
episodes, each agent's mean regret, the CPU seconds per episode of each agent, and the
share of episodes in which the two final allocations differ. ``--cpu-minutes`` stops
after that much CPU time (the summary so far is printed every ``--every`` episodes).

Usage: ``python benchmarks/kg_rollout_room.py [--episodes 2000] [--sims 10] [--top 2]
[--z 0] [--cpu-minutes 60] [--every 100]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from gymnasium.utils import seeding

import agents
from agents.bayesian.beta_prior import posterior
from agents.bayesian.kg_rollout import KGRollout
from agents.bayesian.knowledge_gradient import KnowledgeGradient
from topk_bench.config import load
from topk_bench.episodes import make_env
from topk_bench.seeds import agent_seed, env_seed

EXPERIMENT = "learned-vs-scripted"
POINT = "one pull per step"
KG_LABEL = "KG (Beta(5, 5) prior)"
ROLLOUT_LABEL = "KG rollout (Beta(5, 5) prior)"
A = B = 5.0


def final_value(agent: agents.Agent, k: int) -> float:
    """``V``: the sum of the k largest posterior means after the episode."""
    alpha, beta = posterior(A, B, agent.counts, agent.means)
    mu = np.sort(alpha / (alpha + beta))
    return float(mu[-k:].sum())


def interval(x: list[float]) -> tuple[float, float, float]:
    """Mean, standard deviation and the 95% half-width (1.96 standard errors)."""
    arr = np.asarray(x)
    sd = float(arr.std(ddof=1)) if arr.size > 1 else math.nan
    return float(arr.mean()), sd, 1.96 * sd / math.sqrt(arr.size)


def summary(rows: dict[str, list[float]], cpu: dict[str, float]) -> None:
    n = len(rows["regret"])
    print(f"episodes: {n}")
    x, y = np.asarray(rows["regret"]), np.asarray(rows["posterior"])
    if n > 2 and np.var(y - x) > 0:
        c = -np.cov(x, y - x)[0, 1] / np.var(y - x, ddof=1)
        rows = {**rows, "combined": list(x + c * (y - x))}
        print(f"  (combined: c = {c:.3f})")
    for name in ("regret", "posterior", "combined"):
        if name not in rows:
            continue
        m, sd, hw = interval(rows[name])
        print(
            f"  gain ({name:9s}): {m:+.5f} ± {hw:.5f}  (95% CI [{m - hw:+.5f}, {m + hw:+.5f}], "
            f"sd {sd:.5f})"
        )
    print(
        f"  mean regret: KG* {np.mean(rows['kg']):.5f}, rollout {np.mean(rows['rollout']):.5f}; "
        f"final allocations differ in {100 * np.mean(rows['differ']):.1f}% of episodes"
    )
    print(
        f"  CPU s / episode: KG* {cpu['kg'] / n:.4f}, rollout {cpu['rollout'] / n:.2f} "
        f"(total {(cpu['kg'] + cpu['rollout']) / 60:.1f} CPU-min)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--first", type=int, default=0, help="the first run index")
    parser.add_argument("--sims", type=int, default=10)
    parser.add_argument("--top", type=int, default=2, help="0: every arm a candidate")
    parser.add_argument("--z", type=float, default=0.0)
    parser.add_argument("--cpu-minutes", type=float, default=60.0)
    parser.add_argument("--every", type=int, default=100)
    args = parser.parse_args()

    exp = load(EXPERIMENT)
    point = next(p for p in exp.points if p.label == POINT)
    env = make_env(point.env_id, point.env_kwargs)
    base = env.unwrapped
    k = base.problem.k
    kg = KnowledgeGradient(A, B)
    rollout = KGRollout(A, B, sims=args.sims, top=args.top or None, z=args.z)
    print(
        f"{EXPERIMENT} / {POINT}: {dict(point.env_kwargs)}\n"
        f"rollout: sims={args.sims}, top={args.top or 'all'}, z={args.z}; gain = regret of KG* "
        f"minus regret of the rollout (positive: the rollout is better)",
        flush=True,
    )
    # compile (and load numba's caches) outside the timed episodes
    for agent in (kg, rollout):
        base.np_random = seeding.np_random(0)[0]
        agent.seed = 0
        agents.run_episode(env, agent, seed=None)

    rows: dict[str, list[float]] = {
        "regret": [],
        "posterior": [],
        "kg": [],
        "rollout": [],
        "differ": [],
    }
    cpu = {"kg": 0.0, "rollout": 0.0}
    for run in range(args.first, args.first + args.episodes):
        seed = env_seed(EXPERIMENT, point.seed_name, run)
        out = {}
        for key, agent, label in (("kg", kg, KG_LABEL), ("rollout", rollout, ROLLOUT_LABEL)):
            base.np_random = seeding.np_random(seed)[0]
            agent.seed = agent_seed(EXPERIMENT, point.seed_name, run, label)
            start = time.process_time()
            result = agents.run_episode(env, agent, seed=None)
            cpu[key] += time.process_time() - start
            out[key] = (result.aggregate_regret, final_value(agent, k), agent.counts.copy())
        rows["regret"].append(out["kg"][0] - out["rollout"][0])
        rows["posterior"].append((out["rollout"][1] - out["kg"][1]) / k)
        rows["kg"].append(out["kg"][0])
        rows["rollout"].append(out["rollout"][0])
        rows["differ"].append(float(not np.array_equal(out["kg"][2], out["rollout"][2])))
        done = run - args.first + 1
        over = (cpu["kg"] + cpu["rollout"]) / 60 >= args.cpu_minutes
        if done % args.every == 0 or done == args.episodes or over:
            summary(rows, cpu)
        if over:
            print(f"stopped: the CPU budget of {args.cpu_minutes} minutes is spent")
            break


if __name__ == "__main__":
    main()
