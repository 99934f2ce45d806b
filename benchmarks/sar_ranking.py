"""Cost of the survivors' ranking of SAR, NSAR and BatchSAR (``nsar.order_by_mean``).

Prints the CPU time of one ranking of 1,000 arms with Bernoulli-like tied means (20
distinct values) split into its shuffle and its sort, and the ranking time of one
n = 1000, budget-20n SAR schedule (every phase with pulls ranks its survivors; an upper
bound: the episode ends once k arms are accepted) per batch of 64 pulls.

Usage: ``python benchmarks/sar_ranking.py``.
"""

import time

import numba
import numpy as np

from agents import engine
from agents.elimination.nsar import nsar_schedule, order_by_mean


@numba.njit
def _rank(order: np.ndarray, m: int, means: np.ndarray, rng: np.random.Generator, reps: int):
    for _ in range(reps):
        order_by_mean(order, 0, m, means, rng)


@numba.njit
def _shuffle(order: np.ndarray, m: int, means: np.ndarray, rng: np.random.Generator, reps: int):
    for _ in range(reps):
        engine.choose_distinct(order[:m], m, m, rng)


@numba.njit
def _sort_shuffled(
    order: np.ndarray, m: int, means: np.ndarray, rng: np.random.Generator, reps: int
):
    """Shuffle then argsort (as the ranking), the shuffle timed apart by :func:`_shuffle`."""
    for _ in range(reps):
        engine.choose_distinct(order[:m], m, m, rng)
        keys = np.empty(m)
        for j in range(m):
            keys[j] = -means[order[j]]
        idx = np.argsort(keys)
        tmp = order[:m].copy()
        for j in range(m):
            order[j] = tmp[idx[j]]


def _best_us(f, m: int, means: np.ndarray, reps: int = 2000, repeats: int = 5) -> float:
    rng = np.random.default_rng(1)
    order = np.arange(means.shape[0])
    f(order, m, means, rng, 1)
    best = np.inf
    for _ in range(repeats):
        t = time.process_time()
        f(order, m, means, rng, reps)
        best = min(best, (time.process_time() - t) / reps * 1e6)
    return best


def main() -> None:
    rng = np.random.default_rng(0)
    means = rng.integers(0, 20, size=1000) / 20.0
    shuffle = _best_us(_shuffle, 1000, means)
    whole = _best_us(_rank, 1000, means)
    print(
        f"rank 1000 arms: {whole:.1f} us (shuffle {shuffle:.1f} us, "
        f"sort of the shuffled arms {whole - shuffle:.1f} us)"
    )
    n, budget, b = 1000, 20 * 1000, 64
    s = nsar_schedule(budget, n, 1.0)
    sizes = [n - r + 1 for r in range(1, n) if s[r] > s[r - 1]]
    total = sum(_best_us(_rank, m, means, reps=200, repeats=3) for m in sizes)
    batches = budget / b
    print(
        f"SAR n={n}, at most: {len(sizes)} rankings, {sum(sizes)} arms ranked, "
        f"{total:.0f} us per episode, {total / batches:.2f} us per batch of {b} "
        f"(~{batches:.0f} batches)"
    )


if __name__ == "__main__":
    main()
