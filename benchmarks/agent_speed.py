"""Speed of the scripted agents on the compiled fast path, against their targets.

Prints, in CPU time on one core (``time.process_time``), after one warm-up episode:

1. pulls per second of every registered agent through ``agents.run_episode`` on a
   ``gym.make("TopK-Batch-v0")`` env, two-level instance (0.6 / 0.5), n = 1000,
   budget 20n, K in {10, 100}, (b, r) = (1, 1) and ``batch_size=None`` (target 1e6);
   fixed-confidence agents play in fixed budget (anytime); ``--rewards gaussian``: the
   same means with Gaussian rewards, sigma = 0.5;
2. the cost of a batch with b <= 64 (target: at most 2 us + 50 ns per pull; not for the
   agents slower by the nature of their step, ``SLOW_STEP``), with
   independent rewards and with paired ones (the runner's): amortised over a budget-20n
   episode, and marginal (budget 200n minus budget 20n, per extra batch);
3. seconds per episode of every elimination agent on n = 12,979 arms (the size of
   jun2016-virus; a random Bernoulli instance, budget 20n; target 1 s);
4. the warm-up of a fresh process: import, then the first episode of every agent, with
   an empty numba cache (compilation) and with the cache filled (loading).

Usage::

    python benchmarks/agent_speed.py                # everything
    python benchmarks/agent_speed.py --agents lucb sar --quick
    python benchmarks/agent_speed.py --agents eb_tc t3c --sections 1 --rewards gaussian
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import gymnasium as gym
import numpy as np

import agents
import bandit_envs  # noqa: F401  (registers the envs)
from agents.base import FIXED_BUDGET

ELIMINATION = ("sar", "nsar", "batch_sar", "halving", "optmai", "adaptive_topk", "batch_racing")
#: Slower than the targets by the nature of their step: section 1 only (a budget-200n
#: episode of kg alone takes minutes): the Bayesian agents, and T3C, whose pull draws
#: the top set of a posterior sample (docs/performance.md).
SLOW_STEP = ("kg", "kg_batch", "learned_batch", "bayes_ttts", "t3c")


def _compiled(name: str) -> bool:
    cls = agents.agent_class(name)
    return getattr(cls, "kernel", None) is not None


def _plays_fixed_budget(name: str) -> bool:
    """Every section plays fixed budget (the fixed-confidence agents as anytime ones)."""
    return FIXED_BUDGET in agents.agent_class(name).settings


def _two_level(n: int, k: int, rewards: str) -> object:
    """zhou2014-two-level with ``rewards`` (the catalog's means; Gaussian: sigma = 0.5)."""
    if rewards == "bernoulli":
        return "zhou2014-two-level"
    means = bandit_envs.instances.make("zhou2014-two-level", n, k).means()
    return bandit_envs.instances.from_means(means, k=k, distribution=rewards, sigma=0.5)


def pulls_per_second(
    name: str, n: int, k: int, batch_size: int | None, episodes: int, rewards: str = "bernoulli"
) -> float:
    instance = _two_level(n, k, rewards)
    env = gym.make(
        "TopK-Batch-v0",
        instance=instance,
        **({"n_arms": n, "k": k} if isinstance(instance, str) else {}),
        budget=20 * n,
        batch_size=batch_size,
        repeat_limit=1 if batch_size is not None else None,
        answer="agent",
    )
    agent = agents.make(name)
    agents.run_episode(env, agent, seed=0)  # warm-up (loads the compiled kernels)
    pulls = 0
    start = time.process_time()
    for seed in range(1, episodes + 1):
        pulls += agents.run_episode(env, agent, seed=seed).pulls
    return pulls / (time.process_time() - start)


def _batch_episodes(
    name: str, b: int, episodes: int, paired: bool, budget: int
) -> tuple[float, int, int]:
    """(CPU seconds, batches, pulls) of ``episodes`` episodes, (b, r) = (b, b), n = 1000, K = 10."""
    env = gym.make(
        "TopK-Batch-v0",
        instance="zhou2014-two-level",
        n_arms=1000,
        k=10,
        budget=budget,
        batch_size=b,
        repeat_limit=b,
        answer="agent",
        paired=paired,
    )
    agent = agents.make(name)
    agents.run_episode(env, agent, seed=0)
    batches = pulls = 0
    start = time.process_time()
    for seed in range(1, episodes + 1):
        res = agents.run_episode(env, agent, seed=seed)
        batches += res.batches
        pulls += res.pulls
    return time.process_time() - start, batches, pulls


def batch_cost(name: str, b: int, episodes: int, paired: bool) -> tuple[float, float, float]:
    """(us per batch, ns per pull, marginal us per batch) with (b, r) = (b, b), n = 1000, K = 10.

    The first two amortise everything over a budget-20n episode (reset, dispatch,
    per-round work such as ranking the survivors); the marginal cost is the extra CPU
    time of a budget-200n episode over a budget-20n one, per extra batch: what one more
    batch costs.
    """
    dt, batches, pulls = _batch_episodes(name, b, episodes, paired, 20_000)
    big = max(1, episodes // 5)
    dt2, batches2, _ = _batch_episodes(name, b, big, paired, 200_000)
    extra = batches2 / big - batches / episodes
    marginal = (dt2 / big - dt / episodes) / extra if extra > 0 else float("nan")
    return dt / batches * 1e6, dt / pulls * 1e9, marginal * 1e6


def big_episode(name: str, n: int = 12_979) -> float:
    rng = np.random.default_rng(0)
    inst = bandit_envs.instances.from_means(rng.uniform(0.0, 1.0, n), k=100)
    env = gym.make("TopK-Batch-v0", instance=inst, budget=20 * n, batch_size=None, answer="agent")
    agent = agents.make(name)
    agents.run_episode(env, agent, seed=0)
    start = time.process_time()
    agents.run_episode(env, agent, seed=1)
    return time.process_time() - start


def fresh_process_warmup(names: list[str], cache_dir: str) -> str:
    """Import, then the first episode of every agent, in a new process using ``cache_dir``."""
    code = (
        "import time; t0 = time.perf_counter()\n"
        "import gymnasium as gym, agents, bandit_envs\n"
        "t1 = time.perf_counter()\n"
        "env = gym.make('TopK-Batch-v0', instance='zhou2014-two-level', n_arms=100, k=10,"
        " budget=2000, batch_size=1, answer='agent')\n"
        f"for name in {names!r}:\n"
        "    if agents.agent_class(name).k_values not in (None, frozenset({10})):\n"
        "        continue  # (lil_ucb: k = 1 only)\n"
        "    agents.run_episode(env, agents.make(name), seed=0)\n"
        "t2 = time.perf_counter()\n"
        f"print(f'import {{t1 - t0:.2f}} s, '\n"
        f"      f'first episode of {len(names)} agents {{t2 - t1:.2f}} s')\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return out.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="*", default=None)
    parser.add_argument("--quick", action="store_true", help="fewer episodes")
    parser.add_argument(
        "--sections", default="1234", help="the sections to run, e.g. 1 or 23 (default: all)"
    )
    parser.add_argument(
        "--rewards",
        choices=("bernoulli", "gaussian"),
        default="bernoulli",
        help="rewards of section 1's instance (gaussian: sigma = 0.5)",
    )
    args = parser.parse_args()
    requested = args.agents or agents.available()
    names = [a for a in requested if _compiled(a) and _plays_fixed_budget(a)]
    skipped = [a for a in requested if not _compiled(a)]
    confidence_only = [a for a in requested if _compiled(a) and not _plays_fixed_budget(a)]
    if confidence_only:
        print(f"(fixed confidence only, not measured: {', '.join(confidence_only)})")
    episodes = 2 if args.quick else 5
    if "1" in args.sections:
        pulls_table(names, skipped, episodes, args.rewards)
    if "2" in args.sections:
        batch_table(names, episodes)
    if "3" in args.sections:
        big_table(names)
    if "4" in args.sections:
        warmup_table(names)


def pulls_table(names: list[str], skipped: list[str], episodes: int, rewards: str) -> None:
    """Section 1."""
    print(f"1. pulls/s, n = 1000, budget 20n, {rewards} rewards (CPU time; target 1e6)")
    print(
        f"{'agent':16s} {'K=10 b=1':>12s} {'K=100 b=1':>12s} {'K=10 None':>12s} {'K=100 None':>12s}"
    )
    for name in names:
        cells = []
        for b in (1, None):
            for k in (10, 100):
                cls = agents.agent_class(name)
                if cls.k_values is not None and k not in cls.k_values:
                    cells.append("-")
                    continue
                rate = pulls_per_second(name, 1000, k, b, episodes, rewards)
                cells.append(f"{rate / 1e6:.2f}M" if rate >= 1e5 else f"{rate / 1e3:.1f}k")
        print(
            f"{name:16s} " + " ".join(f"{c:>12s}" for c in (cells[0], cells[1], cells[2], cells[3]))
        )
    if skipped:
        print(
            f"(not compiled, not measured: {', '.join(skipped)}; bayes_dp is an exact dynamic "
            "program over posterior states, for families of a few arms: it cannot play n = 1000)"
        )


def batch_table(names: list[str], episodes: int) -> None:
    """Section 2."""
    print("\n2. batch cost, n = 1000, K = 10, (b, r) = (b, b) (target <= 2 us + 50 ns/pull)")
    for name in names:
        if agents.agent_class(name).k_values is not None or name in SLOW_STEP:
            continue
        for b in (8, 64):
            for paired in (False, True):
                us, ns, marginal = batch_cost(name, b, episodes, paired)
                print(
                    f"{name:16s} b={b:3d} {'paired  ' if paired else 'unpaired'}: "
                    f"{us:7.2f} us/batch"
                    f" = {ns:6.1f} ns/pull, marginal {marginal:5.2f} us/batch"
                    f" (target {2 + 0.05 * b:.2f} us)"
                )


def big_table(names: list[str]) -> None:
    """Section 3."""
    print("\n3. seconds per episode, n = 12,979, K = 100, budget 20n, batch_size=None (target 1 s)")
    for name in ELIMINATION:
        if name in names:
            print(f"{name:16s} {big_episode(name):.3f} s")


def warmup_table(names: list[str]) -> None:
    """Section 4."""
    print("\n4. fresh process: cold (empty numba cache: compile) and warm (kernels from the cache)")
    with tempfile.TemporaryDirectory() as cache:
        print(f"cold: {fresh_process_warmup(names, cache)}")
        print(f"warm: {fresh_process_warmup(names, cache)}")
        print(f"warm, one agent ({names[0]}): {fresh_process_warmup(names[:1], cache)}")


if __name__ == "__main__":
    main()
