"""Reproduce Table 1 of Jun, Jamieson, Nowak, Zhu (AISTATS 2016): BatchRacing speedups.

Setup (Sec. 5.1): n = 100 Bernoulli arms, k = 10, delta = 0.1; Linear
(``mu_i = (99 - i + 1)/99``, catalog ``jun2016-linear``) and Sparse (10 arms at 0.5,
90 at 0.3, ``jun2016-sparse``). BatchRacing runs 10 times at every (b, r) of the
table and at b = r = 1; the *speedup* of (b, r) is the average number of batches at
(1, 1) divided by the average number of batches at (b, r). The *theory* speedup is
``sum_i T_bar_i / M_{b,r}`` with ``M_{b,r}`` the batch-complexity bound of eq. (7)
(Theorem 1); we recompute it and it matches the paper's Theory column to the printed
digits.

Run i of every (b, r) uses seed ``seed + i`` and, by default, the environment's common
random numbers (``paired=True``: the j-th pull of an arm gets the same reward in every
setting). Each average is unchanged in expectation; the ratio of two averages, the
speedup, is then much less noisy than with independent rewards (``--independent``).

The script prints, per instance and (b, r): our average batches, our speedup, the
paper's "Actual" speedup and the relative difference, our and the paper's theory
speedup, and how many runs misidentified the top k.

Usage::

    python benchmarks/jun2016_table1.py              # the full table, 10 runs (hours)
    python benchmarks/jun2016_table1.py --quick      # Sparse, 2 runs, 4 settings (~1.5 min)
    python benchmarks/jun2016_table1.py --runs 1 --instances linear

Cost: the (1, 1) runs dominate: about 3.6e6 batches per Linear run and 3.2e5 per
Sparse run; every batch is one environment step (about 80-250 us of CPU each, most of
it in the shared scheduler and environment), so one Linear run of the whole table
takes about 20 CPU minutes and one Sparse run about 1.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence

import gymnasium as gym
import numpy as np

import agents
import bandit_envs  # noqa: F401  (registers TopK-Batch-v0)
from bandit_envs import instances

N_ARMS, K, DELTA = 100, 10, 0.1
INSTANCES = {"linear": "jun2016-linear", "sparse": "jun2016-sparse"}

# (b, r) -> (Linear theory, Linear actual, Sparse theory, Sparse actual), Table 1.
PAPER: dict[tuple[int, int], tuple[float, float, float, float]] = {
    (4, 1): (2.71, 2.74, 4.00, 4.00),
    (4, 2): (4.00, 4.00, 4.00, 4.00),
    (16, 1): (3.14, 3.18, 16.00, 15.83),
    (16, 2): (6.08, 6.16, 16.00, 15.95),
    (16, 4): (10.84, 10.96, 16.00, 15.99),
    (16, 8): (16.00, 16.00, 16.00, 16.00),
    (64, 1): (3.16, 3.21, 63.97, 58.28),
    (64, 2): (6.32, 6.41, 63.97, 61.88),
    (64, 4): (12.55, 12.74, 63.97, 63.25),
    (64, 8): (24.31, 24.65, 63.97, 63.73),
    (64, 16): (43.37, 43.83, 63.97, 63.87),
    (64, 32): (64.00, 63.99, 63.97, 63.90),
}
SETTINGS = tuple({"b": b, "r": r} for b, r in [(1, 1), *PAPER])
QUICK = ((1, 1), (4, 1), (16, 4), (64, 32))


def t_bar(gaps: np.ndarray, delta: float, n: int) -> np.ndarray:
    """``T_bar_i = 1 + floor(64 D^-2 log((2/omega) log2(192 D^-2 / omega)))`` (Sec. 3)."""
    omega = math.sqrt(delta / (6 * n))
    inv = np.asarray(gaps, dtype=np.float64) ** -2.0
    return 1.0 + np.floor(64.0 * inv * np.log((2.0 / omega) * np.log2(192.0 * inv / omega)))


def theory_speedup(means: np.ndarray, k: int, b: int, r: int, delta: float = DELTA) -> float:
    """``sum_i T_bar_sigma(i) / M_{b,r}``, ``M`` the bound of eq. (7) (Theorem 1)."""
    mu = np.sort(np.asarray(means, dtype=np.float64))[::-1]
    n = mu.shape[0]
    gaps = np.where(np.arange(n) < k, mu - mu[k], mu[k - 1] - mu)
    tb = t_bar(np.sort(gaps), delta, n)  # T_bar_sigma(1), ..., T_bar_sigma(n)
    if b == 1:
        return 1.0
    rp = min(r, b // 2)
    m = tb[0] / rp + tb[b // rp :].sum() / b + math.log(n) + n / b + 1.0 / rp + 2.0
    return float(tb.sum() / m)


def run_setting(
    instance: str, b: int, r: int, runs: int, delta: float, seed0: int, paired: bool = True
) -> tuple[np.ndarray, int, float]:
    """Batches of ``runs`` BatchRacing episodes at (b, r); misidentifications; CPU seconds."""
    env = gym.make("TopK-Batch-v0", instance=instance, n_arms=N_ARMS, k=K,
                   setting="fixed_confidence", batch_size=b, repeat_limit=r, answer="agent",
                   paired=paired)
    start = time.process_time()
    batches, errors = [], 0
    for i in range(runs):
        res = agents.run_episode(env, agents.make("batch_racing", delta=delta), seed=seed0 + i)
        batches.append(res.batches)
        errors += int(res.misidentified)
    return np.asarray(batches, dtype=np.float64), errors, time.process_time() - start


def main(argv: Sequence[str] | None = None) -> list[dict[str, object]]:
    """Run the reproduction; print the table; return its rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="episodes per (b, r) (paper: 10)")
    parser.add_argument("--quick", action="store_true", help="Sparse only, 2 runs, 4 settings")
    parser.add_argument("--instances", nargs="+", choices=sorted(INSTANCES), default=None)
    parser.add_argument("--delta", type=float, default=DELTA)
    parser.add_argument("--seed", type=int, default=0, help="seed of the first run")
    parser.add_argument("--independent", action="store_true",
                        help="independent rewards per setting (default: common random numbers)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs={args.runs} must be >= 1")
    names = args.instances or (["sparse"] if args.quick else ["linear", "sparse"])
    runs = 2 if args.quick and args.runs == 10 else args.runs
    pairs = QUICK if args.quick else tuple((s["b"], s["r"]) for s in SETTINGS)

    rows: list[dict[str, object]] = []
    for name in names:
        inst = INSTANCES[name]
        means = instances.make(inst, n_arms=N_ARMS, k=K).means()
        col = 1 if name == "linear" else 3
        rewards = "independent" if args.independent else "common random numbers"
        print(f"\n{name} ({inst}), n={N_ARMS}, k={K}, delta={args.delta}, runs={runs}, {rewards}",
              flush=True)
        print(f"{'b':>3} {'r':>3} {'batches':>12} {'speedup':>8} {'paper':>7} {'rel.diff':>9} "
              f"{'theory':>7} {'paper_th':>8} {'errors':>6} {'cpu_s':>7}", flush=True)
        base = None
        for b, r in pairs:
            batches, errors, cpu = run_setting(inst, b, r, runs, args.delta, args.seed,
                                               not args.independent)
            mean = float(batches.mean())
            if (b, r) == (1, 1):
                base = mean
            speed = base / mean if base is not None else float("nan")
            paper = PAPER.get((b, r), (1.0, 1.0, 1.0, 1.0))
            actual, paper_th = paper[col], paper[col - 1]
            rel = (speed - actual) / actual
            theory = theory_speedup(means, K, b, r, args.delta)
            rows.append({"instance": name, "b": b, "r": r, "runs": runs, "mean_batches": mean,
                         "sd_batches": float(batches.std(ddof=1)) if runs > 1 else float("nan"),
                         "speedup": speed, "paper_actual": actual, "rel_diff": rel,
                         "theory": theory, "paper_theory": paper_th, "errors": errors,
                         "cpu_s": cpu})
            print(f"{b:>3} {r:>3} {mean:>12.1f} {speed:>8.2f} {actual:>7.2f} {100 * rel:>8.1f}% "
                  f"{theory:>7.2f} {paper_th:>8.2f} {errors:>6} {cpu:>7.1f}", flush=True)
        within = [row for row in rows if row["instance"] == name and (row["b"], row["r"]) != (1, 1)]
        worst = max(abs(row["rel_diff"]) for row in within) if within else float("nan")
        print(f"largest |relative difference| to the paper's Actual column: {100 * worst:.1f}% "
              f"({'within' if worst <= 0.10 else 'NOT within'} 10%)", flush=True)
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
