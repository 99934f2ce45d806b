"""Qualitative claims of zhou2014 (OptMAI) and chen2017 (AdaptiveTopK), and OptMAI's speed.

Experiments (settings as data, ids ``"<experiment>/<i>"``):

* ``zhou2014-fig1``: two-level means (0.6 for k arms, 0.5 for the rest), n = 1000,
  k = 100, Q = 20n, Bernoulli (zhou2014 Sec. 6.1, Fig. 1). Claim: OptMAI has a lower
  aggregate regret than uniform allocation and SAR. Table: mean regret (standard
  error), precision, most pulls of one arm (zhou2014 Sec. 6.2 notes OptMAI's are far
  fewer than SAR's).
* ``chen2017-fig``: TWOGROUP (0.7 / 0.3) and SYNTHETIC-6, n = 1000, eps = delta =
  0.01, k in {100, 500}, one budget point (default 20n). Claim (chen2017 Sec. 3):
  AdaptiveTopK, run as its fixed-budget conversion, has a lower failure probability
  P(aggregate regret > eps) than OptMAI and uniform (TWOGROUP: "outperforms other
  algorithms significantly for all values of K"). ``--clucb`` adds CLUCB-PAC (slow:
  one pull per step).
* ``speed``: one OptMAI episode with n_arms = 1000, budget = 100n, batch_size=None,
  played by ``agents.run_episode`` on ``TopK-Batch-v0`` with ``answer="agent"``
  (target: under 20 ms), with the time split between env reset, env steps and the
  agent.

Agents that are not available (``agents.available()``) are skipped.

Run: ``python benchmarks/zhou_chen_claims.py [--runs N] [--chen-budget M] [--clucb]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

import agents
import bandit_envs  # noqa: F401

EPSILON = 0.01

ZHOU_SETTINGS = tuple(
    {
        "id": f"zhou2014-fig1/{i}",
        "instance": "zhou2014-two-level",
        "n_arms": 1000,
        "k": k,
        "per_arm": q,
    }
    for i, (k, q) in enumerate([(100, 20)])
)
ZHOU_AGENTS = (
    ("optmai (beta=0.8)", "optmai", {"beta": 0.8}),
    ("optmai (beta=0.9)", "optmai", {"beta": 0.9}),
    ("optmai (beta=theory)", "optmai", {"beta": "theory"}),
    ("uniform", "uniform", {}),
    ("sar", "sar", {}),
)

CHEN_SETTINGS = tuple(
    {
        "id": f"chen2017-fig/{i}",
        "instance": inst,
        "params": params,
        "label": label,
        "n_arms": 1000,
        "k": k,
    }
    for i, (inst, params, label, k) in enumerate(
        [
            ("chen2017-twogroup", None, "TWOGROUP", 100),
            ("chen2017-twogroup", None, "TWOGROUP", 500),
            ("chen2017-synthetic", {"p": 6}, "SYNTHETIC-6", 100),
            ("chen2017-synthetic", {"p": 6}, "SYNTHETIC-6", 500),
        ]
    )
)
CHEN_AGENTS = (
    ("adaptive_topk (notes m_r)", "adaptive_topk", {"epsilon": EPSILON, "delta": 0.01}),
    (
        "adaptive_topk (paper m_r)",
        "adaptive_topk",
        {"epsilon": EPSILON, "delta": 0.01, "round_pulls": "paper"},
    ),
    ("optmai (beta=0.8)", "optmai", {"beta": 0.8}),
    ("uniform", "uniform", {}),
)
CLUCB = ("clucb_pac", "clucb_pac", {"epsilon": EPSILON, "delta": 0.01})
TESTING = (ZHOU_SETTINGS[0], CHEN_SETTINGS[0])


def _available(
    specs: Sequence[tuple[str, str, dict[str, Any]]],
) -> list[tuple[str, str, dict[str, Any]]]:
    have = set(agents.available())
    missing = sorted({name for _, name, _ in specs if name not in have})
    if missing:
        print(f"(skipping agents not available yet: {', '.join(missing)})")
    return [s for s in specs if s[1] in have]


def _row(cells: Sequence[Any], widths: Sequence[int]) -> str:
    return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=False))


def zhou2014(runs: int) -> None:
    """Mean aggregate regret on the two-level instance (zhou2014 Fig. 1)."""
    specs = _available(ZHOU_AGENTS)
    for st in ZHOU_SETTINGS:
        n, k = st["n_arms"], st["k"]
        budget = st["per_arm"] * n
        env = gym.make(
            "TopK-Batch-v0",
            instance=st["instance"],
            n_arms=n,
            k=k,
            budget=budget,
            batch_size=None,
            answer="agent",
        )
        print(
            f"\n[{st['id']}] zhou2014 Fig. 1: two-level 0.6/0.5, n={n}, k={k}, Q={st['per_arm']}n, "
            f"{runs} runs (seeds 0..{runs - 1})"
        )
        widths = (22, 18, 10, 14, 10)
        print(_row(("agent", "regret (s.e.)", "precision", "max pulls/arm", "pulls"), widths))
        for label, name, kw in specs:
            agent = agents.make(name, **kw)
            regrets, precisions, most, pulls = [], [], [], []
            for seed in range(runs):
                res = agents.run_episode(env, agent, seed=seed)
                regrets.append(res.aggregate_regret)
                precisions.append(res.precision)
                most.append(int(agent.counts.max()))
                pulls.append(res.pulls)
            se = statistics.stdev(regrets) / runs**0.5 if runs > 1 else float("nan")
            print(
                _row(
                    (
                        label,
                        f"{np.mean(regrets):.4f} ({se:.4f})",
                        f"{np.mean(precisions):.3f}",
                        f"{np.mean(most):.0f}",
                        f"{np.mean(pulls):.0f}",
                    ),
                    widths,
                )
            )


def chen2017(runs: int, per_arm: int, clucb: bool) -> None:
    """Failure probability P(regret > eps) at one budget point (chen2017 Figs. 1 and 4)."""
    specs = _available(CHEN_AGENTS + ((CLUCB,) if clucb else ()))
    labels = [label for label, _, _ in specs]
    widths = (24,) + tuple(max(12, len(lb)) for lb in labels)
    print(
        f"\n[chen2017-fig] chen2017 Sec. 3: failure probability P(aggregate regret > {EPSILON}), "
        f"n=1000, budget={per_arm}n, fixed-budget versions, {runs} runs"
    )
    print(_row(("setting",) + tuple(labels), widths))
    for st in CHEN_SETTINGS:
        n, k = st["n_arms"], st["k"]
        env = gym.make(
            "TopK-Batch-v0",
            instance=st["instance"],
            instance_params=st["params"],
            n_arms=n,
            k=k,
            budget=per_arm * n,
            batch_size=None,
            answer="agent",
            epsilon=EPSILON,
        )
        cells = [f"{st['label']} k={k}"]
        for _, name, kw in specs:
            agent = agents.make(name, **kw)
            fails = sum(
                agents.run_episode(env, agent, seed=s).aggregate_regret > EPSILON
                for s in range(runs)
            )
            cells.append(f"{fails / runs:.3f}")
        print(_row(cells, widths))


def speed(episodes: int) -> None:
    """Wall time of one OptMAI episode (n = 1000, budget = 100n, batch_size=None)."""
    n = 1000
    env = gym.make(
        "TopK-Batch-v0",
        instance="zhou2014-two-level",
        n_arms=n,
        k=10,
        budget=100 * n,
        batch_size=None,
        answer="agent",
    )
    agent = agents.make("optmai")
    base = env.unwrapped
    agents.run_episode(env, agent, seed=0)  # warm-up

    totals, resets, steps = [], [], []
    step_time = [0.0]
    real_step = base.step_sparse
    real_answer = base.answer_sparse
    real_reset = env.reset
    reset_time = [0.0]

    def timed_step(arms, reps):
        t = time.perf_counter()
        out = real_step(arms, reps)
        step_time[0] += time.perf_counter() - t
        return out

    def timed_answer(rec):
        t = time.perf_counter()
        out = real_answer(rec)
        step_time[0] += time.perf_counter() - t
        return out

    def timed_reset(**kw):
        t = time.perf_counter()
        out = real_reset(**kw)
        reset_time[0] += time.perf_counter() - t
        return out

    cpu = []
    for seed in range(episodes):  # plain runs first: the timing wrappers add overhead
        t, c = time.perf_counter(), time.process_time()
        agents.run_episode(env, agent, seed=seed)
        totals.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    base.step_sparse, base.answer_sparse, env.reset = timed_step, timed_answer, timed_reset
    try:
        for seed in range(episodes):
            step_time[0] = reset_time[0] = 0.0
            agents.run_episode(env, agent, seed=seed)
            steps.append(step_time[0])
            resets.append(reset_time[0])
    finally:
        del base.step_sparse, base.answer_sparse, env.reset
    med = statistics.median(totals) * 1e3
    print(
        f"\n[speed] OptMAI, n={n}, budget=100n, batch_size=None, run_episode on TopK-Batch-v0 "
        f"(answer='agent'), {episodes} episodes"
    )
    cpu_med = statistics.median(cpu) * 1e3
    print(
        f"  episode wall time: median {med:.2f} ms, mean {np.mean(totals) * 1e3:.2f} ms, "
        f"max {max(totals) * 1e3:.2f} ms; CPU time: median {cpu_med:.2f} ms "
        f"(target < 20 ms: {'met' if min(med, cpu_med) < 20 else 'NOT met'}; wall time "
        f"counts other processes' load, CPU time does not)"
    )
    print(
        f"  of which env.reset {statistics.median(resets) * 1e3:.2f} ms, env steps (step_sparse + "
        f"answer_sparse) {statistics.median(steps) * 1e3:.2f} ms; {len(agent.per_round)} rounds, "
        f"{int((agent.per_round > 0).sum())} env steps with pulls"
    )


def main(argv: list[str] | None = None) -> None:
    """Print the tables (``--runs`` episodes per cell)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="episodes per table cell (default 20)")
    parser.add_argument(
        "--chen-budget", type=int, default=20, help="chen2017 budget in pulls per arm (default 20)"
    )
    parser.add_argument(
        "--clucb", action="store_true", help="add CLUCB-PAC to the chen2017 table (slow)"
    )
    parser.add_argument(
        "--speed-episodes", type=int, default=50, help="episodes for the speed measurement"
    )
    parser.add_argument(
        "--only", choices=["zhou", "chen", "speed"], default=None, help="run one part"
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.chen_budget < 1 or args.speed_episodes < 1:
        parser.error("--runs, --chen-budget and --speed-episodes must be >= 1")
    if args.only in (None, "zhou"):
        zhou2014(args.runs)
    if args.only in (None, "chen"):
        chen2017(args.runs, args.chen_budget, args.clucb)
    if args.only in (None, "speed"):
        speed(args.speed_episodes)


if __name__ == "__main__":
    main()
