"""Environment speed: single envs, and the native vector envs next to a bare NumPy draw.

Prints one table: time per ``step()`` call and env-steps per second for

* single envs (``TopK-v0``, ``TopK-Batch-v0``), the raw env and through ``gym.make``
  (whole episodes, resets included), and single steps without resets: ``TopK-v0`` with
  10 arms (target < 5 us) and ``TopK-Batch-v0`` with ``batch_size=None`` and 1000 arms
  (target < 50 us);
* the native vector envs (``gym.make_vec(..., vectorization_mode="vector_entry_point")``)
  at several ``num_envs``, over whole episodes (autoreset and terminal scoring
  amortized), each next to the bare NumPy draw of the same shape, the limit (target:
  ``TopK-v0``, 4096 envs, 10 Bernoulli arms, > 12.5M env-steps/s, i.e. < 328 us a step).

Times are CPU seconds of this process (``time.process_time``), the best of
``--repeat`` runs, so that other work on a shared machine slows the numbers (through
caches) but is not counted; the wall-clock best is printed too. Thread settings
(OPENBLAS etc.) are left as they are; NumPy runs these operations on one core.

Usage::

    python benchmarks/env_speed.py            # full table (~1-2 min)
    python benchmarks/env_speed.py --quick    # fewer sizes and repeats
    python benchmarks/env_speed.py --profile  # also cProfile the single-env steps
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

import bandit_envs  # noqa: F401  (registers the ids)

FIXED10 = [round(0.05 + 0.1 * i, 2) for i in range(10)]  # 10 fixed Bernoulli means


def best_per_call(fn: Callable[[], Any], calls: int, repeat: int) -> tuple[float, float]:
    """Best (CPU s, wall s) per call of ``fn`` over ``repeat`` runs of ``calls`` calls."""
    cpu, wall = float("inf"), float("inf")
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(calls):
            fn()
        cpu = min(cpu, (time.process_time() - c0) / calls)
        wall = min(wall, (time.perf_counter() - w0) / calls)
    return cpu, wall


def single_episodes(env: gym.Env, actions: list[Any]) -> Callable[[], None]:
    """A ``step`` that resets when the episode ends (so episodes are timed whole)."""
    env.reset(seed=0)
    state = {"t": 0}
    m = len(actions)

    def step() -> None:
        t = state["t"]
        state["t"] = t + 1
        _, _, term, trunc, _ = env.step(actions[t % m])
        if term or trunc:
            env.reset()

    return step


def vector_steps(envs: gym.vector.VectorEnv, actions: list[np.ndarray]) -> Callable[[], None]:
    envs.reset(seed=0)
    state = {"t": 0}
    m = len(actions)

    def step() -> None:
        t = state["t"]
        state["t"] = t + 1
        envs.step(actions[t % m])

    return step


def batch_rows(n_envs: int, n_arms: int, width: int, reps: int) -> list[np.ndarray]:
    """Actions pulling ``width`` consecutive arms ``reps`` times each, rotating over steps."""
    out = []
    for start in range(n_arms):
        a = np.zeros((n_envs, n_arms), dtype=np.int64)
        a[:, [(start + j) % n_arms for j in range(width)]] = reps
        out.append(a)
    return out


def run(quick: bool, repeat: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def add(
        case: str, n_envs: int, cpu: float, wall: float, limit: float | None = None, note: str = ""
    ) -> None:
        rows.append(
            {"case": case, "N": n_envs, "cpu": cpu, "wall": wall, "limit": limit, "note": note}
        )
        print(f"  measured {case} N={n_envs}: {cpu * 1e6:.1f} us/step", file=sys.stderr)

    # Single environments ------------------------------------------------------------------
    steps = 20_000 if quick else 60_000
    raw = gym.make("TopK-v0", n_arms=10, k=3, instance=FIXED10, budget=10**9).unwrapped
    raw.reset(seed=0)
    arms = list(range(10))
    state = {"t": 0}

    def topk_step() -> None:
        state["t"] += 1
        raw.step(arms[state["t"] % 10])

    add(
        "TopK-v0 single step, 10 arms (raw env, no resets)",
        1,
        *best_per_call(topk_step, steps, repeat),
        note="target < 5 us",
    )
    for label, make in (("raw env", lambda e: e.unwrapped), ("gym.make", lambda e: e)):
        env = make(gym.make("TopK-v0", n_arms=10, k=3, instance=FIXED10))
        add(
            f"TopK-v0 single, 10 arms, budget 200 ({label})",
            1,
            *best_per_call(single_episodes(env, arms), steps, repeat),
        )
    for label, make in (("raw env", lambda e: e.unwrapped), ("gym.make", lambda e: e)):
        env = make(gym.make("TopK-Batch-v0", n_arms=10, k=3, instance=FIXED10, batch_size=5))
        acts = [a[0] for a in batch_rows(1, 10, 5, 1)]
        add(
            f"TopK-Batch-v0 single, 10 arms, b=5, 5 pulls/step ({label})",
            1,
            *best_per_call(single_episodes(env, acts), steps // 2, repeat),
        )
    big = gym.make("TopK-Batch-v0", n_arms=1000, k=10, batch_size=None, budget=10**12).unwrapped
    for label, action in (
        ("all 1000 arms once", np.ones(1000, dtype=np.int64)),
        ("10 arms x 100 pulls", batch_rows(1, 1000, 10, 100)[0][0]),
    ):
        big.reset(seed=0)
        add(
            f"TopK-Batch-v0 single step, n=1000, b=None, {label}",
            1,
            *best_per_call(lambda a=action: big.step(a), 2000 if quick else 5000, repeat),
            note="target < 50 us",
        )

    # Vector environments ------------------------------------------------------------------
    rng = np.random.default_rng(0)
    sizes = (64, 4096) if quick else (64, 1024, 4096, 16384)
    for n_envs in sizes:
        u = np.empty(n_envs)
        limit = best_per_call(lambda u=u: rng.random(out=u), 200, repeat)[0]
        envs = gym.make_vec(
            "TopK-v0",
            num_envs=n_envs,
            vectorization_mode="vector_entry_point",
            n_arms=10,
            k=3,
            instance=FIXED10,
        )
        acts = [np.full(n_envs, a) for a in range(10)]
        calls = max(402, min(4020, 2_000_000 // n_envs))  # >= 2 episodes of 200 steps
        add(
            "TopK-v0 vector, 10 fixed Bernoulli arms, budget 200",
            n_envs,
            *best_per_call(vector_steps(envs, acts), calls, repeat),
            limit,
            note="target > 12.5M/s at N=4096" if n_envs == 4096 else "",
        )
    n_envs = 4096
    u = np.empty(n_envs)
    limit = best_per_call(lambda: rng.random(out=u), 200, repeat)[0]
    acts = [np.full(n_envs, a) for a in range(10)]
    envs = gym.make_vec(
        "TopK-v0",
        num_envs=n_envs,
        vectorization_mode="vector_entry_point",
        n_arms=10,
        k=3,
        instance=FIXED10,
        copy=False,
    )
    add(
        "TopK-v0 vector, as above, copy=False",
        n_envs,
        *best_per_call(vector_steps(envs, acts), 804, repeat),
        limit,
    )
    envs = gym.make_vec(
        "TopK-v0", num_envs=n_envs, vectorization_mode="vector_entry_point", n_arms=10, k=3
    )
    add(
        "TopK-v0 vector, uniform-random means (default)",
        n_envs,
        *best_per_call(vector_steps(envs, acts), 804, repeat),
        limit,
        note="restarts loop instance.arms(rng)",
    )
    for n_envs in sizes[:-1] if not quick else sizes:
        draw = np.empty((n_envs, 5))
        limit = best_per_call(lambda d=draw: rng.random(out=d), 100, repeat)[0]
        envs = gym.make_vec(
            "TopK-Batch-v0",
            num_envs=n_envs,
            vectorization_mode="vector_entry_point",
            n_arms=10,
            k=3,
            instance=FIXED10,
            batch_size=5,
        )
        calls = max(82, min(820, 400_000 // n_envs))  # >= 2 episodes of 40 steps
        add(
            "TopK-Batch-v0 vector, 10 arms, b=5, 5 arms x 1 pull",
            n_envs,
            *best_per_call(vector_steps(envs, batch_rows(n_envs, 10, 5, 1)), calls, repeat),
            limit,
        )
    for n_envs in (64, 4096):
        p = rng.random(n_envs)
        limit = best_per_call(lambda p=p: rng.binomial(20, p), 100, repeat)[0]
        envs = gym.make_vec(
            "TopK-Batch-v0",
            num_envs=n_envs,
            vectorization_mode="vector_entry_point",
            n_arms=10,
            k=3,
            instance=FIXED10,
            batch_size=20,
        )
        calls = max(40, min(400, 200_000 // n_envs))  # >= 4 episodes of 10 steps
        add(
            "TopK-Batch-v0 vector, 10 arms, b=20, 1 arm x 20 pulls",
            n_envs,
            *best_per_call(vector_steps(envs, batch_rows(n_envs, 10, 1, 20)), calls, repeat),
            limit,
            note="limit: binomial(20, p)",
        )
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    head = (
        f"{'case':<62} {'N':>6} {'us/step':>9} {'env-steps/s':>12} {'wall us':>9} "
        f"{'draw us':>8} {'draw/s':>10} {'draw/env':>8}  note"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        rate = r["N"] / r["cpu"]
        limit = r["limit"]
        lim_us = f"{limit * 1e6:8.1f}" if limit else " " * 8
        lim_rate = f"{r['N'] / limit:10.3g}" if limit else " " * 10
        share = f"{limit / r['cpu']:8.1%}" if limit else " " * 8
        print(
            f"{r['case']:<62} {r['N']:>6} {r['cpu'] * 1e6:9.2f} {rate:12.4g} "
            f"{r['wall'] * 1e6:9.2f} "
            f"{lim_us} {lim_rate} {share}  {r['note']}"
        )
    print("us/step, env-steps/s: CPU time per step() call (best run); wall us: wall-clock best;")
    print("draw: the bare NumPy draw of the same shape (rng.random(N), rng.random((N, 5)) or")
    print("rng.binomial(20, p)), the limit; draw/env: the share of the step spent drawing.")


def profile_single(steps: int = 50_000) -> None:
    """cProfile of the single-env steps (what costs what)."""
    for env_id, kwargs, action in (
        ("TopK-v0", {"n_arms": 10, "instance": FIXED10, "budget": 10**9}, 3),
        (
            "TopK-Batch-v0",
            {"n_arms": 1000, "k": 10, "batch_size": None, "budget": 10**12},
            np.ones(1000, dtype=np.int64),
        ),
    ):
        env = gym.make(env_id, **kwargs).unwrapped
        env.reset(seed=0)
        n = steps if env_id == "TopK-v0" else steps // 25
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(n):
            env.step(action)
        profiler.disable()
        print(f"\n=== cProfile: {n} steps of {env_id} {kwargs}")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and steps")
    parser.add_argument("--repeat", type=int, default=None, help="runs per measurement (best kept)")
    parser.add_argument("--profile", action="store_true", help="also cProfile the single-env steps")
    args = parser.parse_args(argv)
    repeat = args.repeat or (2 if args.quick else 5)
    print(
        f"env speed: numpy {np.__version__}, gymnasium {gym.__version__}, cores={os.cpu_count()}, "
        f"load average={os.getloadavg()[0]:.2f}"
    )
    rows = run(args.quick, repeat)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print_table(rows)
    if args.profile:
        profile_single()
    return 0


if __name__ == "__main__":
    sys.exit(main())
