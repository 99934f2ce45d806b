"""Exact values of the Bayes-optimal policy, KG* and uniform allocation on tiny families.

Means i.i.d. Beta(a, b), Bernoulli rewards, aggregate regret (the terminal value is the
sum of the k largest posterior means). Every value is exact
(:mod:`agents.bayesian.exact`: backward induction over the posterior states up to arm
permutation; policies evaluated on the same states, ties averaged):

* **Sequential**: a budget of T pulls, one at a time. Columns: the posterior states, the
  solve time, ``V*`` (the optimum), KG* (the ``kg`` agent's decision, :func:`kg_rule`)
  and uniform (round robin: floor(T / n) pulls an arm, the rest to random arms; the
  ``uniform`` agent's allocation), each as an expected terminal value; ``KG share``:
  the share of uniform's gap to the optimum KG* closes, ``(KG - U) / (V* - U)``;
  ``risk*``: the optimum's Bayes risk per answer arm, ``(E[top-k sum] - V*) / k`` (the
  environment's aggregate regret); the time of KG*'s evaluation.
* **Batches**: 3 arms, batches of b = 2 pulls, at most r = 1 pull an arm a batch (Jun et
  al.'s A; batches of 1 pull allowed), ``B`` batches. ``V*`` plans whole batches
  (:class:`agents.bayesian.exact.BatchDP`); ``1/batch*``: the best policy that pulls once
  a batch (the sequential optimum over B pulls); KG*: the ``kg`` agent as it plays there
  (one pull a batch, its look-ahead the pulls left of the 2B budget); ``KG* top-2``: each
  batch pulls the 2 arms of largest KG* value (a myopic fill; ties averaged); uniform: round robin
  in full batches (2B pulls, the same allocation as sequential round robin);
  ``seq 2B*``: the sequential optimum over 2B pulls (an upper bound: a sequential policy
  can play any batch policy). Shares of uniform's gap to ``V*``; negative: below uniform.

Usage: ``python benchmarks/bayes_optimal_gap.py [--quick]`` (``--quick``: budgets up to
20, a few seconds once compiled; the full grid takes minutes on one core).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import integrate, stats

from agents.bayesian.exact import BatchDP, BetaBernoulliDP, kg_rule, kg_top_batch_rule, rule_weights

PRIORS = [(1.0, 1.0), (5.0, 5.0)]


def expected_top_k(n: int, k: int, a: float, b: float) -> float:
    """E[sum of the k largest of n i.i.d. Beta(a, b)] = sum_j int P(at least j exceed x) dx."""

    def at_least(x: float, j: int) -> float:
        s = stats.beta.sf(x, a, b)
        return sum(math.comb(n, i) * s**i * (1 - s) ** (n - i) for i in range(j, n + 1))

    return sum(
        integrate.quad(at_least, 0, 1, args=(j,), epsabs=1e-13, epsrel=1e-13)[0]
        for j in range(1, k + 1)
    )


def share(x: float, opt: float, base: float) -> str:
    """The share of ``base``'s gap to ``opt`` that ``x`` closes (``-``: no gap)."""
    gap = opt - base
    return f"{100 * (x - base) / gap:7.2f}%" if gap > 1e-12 else "      -"


def sequential(budgets: dict[int, list[int]]) -> None:
    print("Sequential: one pull a step, a budget of T pulls")
    head = (
        f"{'n':>2} {'k':>2} {'T':>3} {'prior':>9} {'states':>10} {'solve s':>8} {'V*':>9} "
        f"{'KG*':>9} {'uniform':>9} {'KG share':>9} {'risk*':>8} {'KG eval s':>9}"
    )
    print(head)
    print("-" * len(head))
    for n, ts in budgets.items():
        for k in (1, 2):
            for a, b in PRIORS:
                top = expected_top_k(n, k, a, b)
                for t in ts:
                    dp = BetaBernoulliDP(n, k, t, a, b)
                    v = dp.solve()
                    start = time.perf_counter()
                    kg = dp.evaluate("kg")
                    kg_s = time.perf_counter() - start
                    u = dp.evaluate("uniform")
                    print(
                        f"{n:>2} {k:>2} {t:>3} {f'B({a:g},{b:g})':>9} {dp.n_states:>10,} "
                        f"{dp.solve_seconds:>8.2f} {v:>9.6f} {kg:>9.6f} {u:>9.6f} "
                        f"{share(kg, v, u):>9} {(top - v) / k:>8.5f} {kg_s:>9.2f}",
                        flush=True,
                    )


def batches(counts: list[int]) -> None:
    print()
    print("Batches: 3 arms, b = 2, r = 1, B batches (max_batches; batches of 1 pull allowed)")
    head = (
        f"{'k':>2} {'B':>3} {'prior':>9} {'states':>7} {'solve s':>8} {'V*':>9} "
        f"{'1/batch*':>9} {'KG*':>9} {'KG* top-2':>9} {'uniform':>9} {'seq 2B*':>9} "
        f"{'1/batch* sh':>11} {'KG* share':>9} {'top-2 sh':>9}"
    )
    print(head)
    print("-" * len(head))
    for k in (1, 2):
        for a, b in PRIORS:
            for nb in counts:
                dp = BatchDP(3, k, 2, 1, nb, a, b)
                v = dp.solve()
                one = BetaBernoulliDP(3, k, nb, a, b)
                best_one = one.solve()

                def kg_in_batches(al, be, kk, pulls, nb=nb):
                    return rule_weights(kg_rule, al, be, kk, pulls + nb)

                kg = one.evaluate(kg_in_batches)
                top2 = dp.evaluate(kg_top_batch_rule)
                two = BetaBernoulliDP(3, k, 2 * nb, a, b)
                u = two.evaluate("uniform")
                print(
                    f"{k:>2} {nb:>3} {f'B({a:g},{b:g})':>9} {dp.n_states:>7,} "
                    f"{dp.solve_seconds:>8.2f} {v:>9.6f} {best_one:>9.6f} {kg:>9.6f} {top2:>9.6f} "
                    f"{u:>9.6f} {two.solve():>9.6f} {share(best_one, v, u):>11} "
                    f"{share(kg, v, u):>9} {share(top2, v, u):>9}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="budgets up to 20")
    args = parser.parse_args()
    warm = BetaBernoulliDP(3, 1, 3)  # compile before timing
    warm.solve(), warm.evaluate("kg"), warm.evaluate("uniform"), BatchDP(3, 1, 2, 1, 2).solve()
    if args.quick:
        sequential({3: [10, 20], 4: [12, 20]})
        batches([2, 5])
    else:
        sequential({3: [10, 20, 30, 40], 4: [12, 20, 30, 40]})
        batches([2, 4, 6, 8, 10])
    print()
    print("Values: expected terminal value (sum of the k largest posterior means); exact.")
    print(f"numpy {np.__version__}; times: wall clock, one core, compiled kernels warm")


if __name__ == "__main__":
    main()
