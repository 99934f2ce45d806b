"""Samples per second of the LUCB family, and where the time goes.

The issue's target: lil'RandLUCB and LUCB++ on ``jiang2017-1-sparse`` (Gaussian), K = 2,
N = 1000 arms, played by :func:`agents.run_episode` on
``TopK-Batch-v0(batch_size=1, setting="fixed_confidence", answer="agent")``: above
100,000 samples/s. This script measures, for each agent:

1. **full**: samples/s through ``run_episode`` (runner + base class + env), best of
   ``--repeats`` episodes (the machine may be shared: the best run is the least
   disturbed). The agents yield :class:`~agents.base.PullOne` requests, which
   ``run_episode`` plays with the env's one-pull step
   (:meth:`~bandit_envs.top_k_batch.TopKBatchEnv.step_one`), without RoundRobin;
2. **agent only**: the agent's generator driven by a minimal stub that draws the
   rewards itself and writes ``counts``/``means`` (no base class, no env): what the
   algorithm's own bookkeeping costs (the "us/sample" column includes the stub's ~1 us);
3. **bare driver**: the same stub but with the env's internal one-pull step
   (``_sample_one``: the real draw and counts/means, no validation, no observation,
   no base class): a floor for the full path (:func:`bare_driver`; before ``PullOne``
   existed this was the "fast-path sketch" the full path was measured against);

then the framework's per-call costs in microseconds, measured with an agent that does
no work (it yields the same ``PullOne`` forever): the whole runner loop per sample,
``env.step_one`` and ``env.step_sparse`` alone, the base's ``next_step`` +
``update_one`` alone, the old sparse protocol (``next_pulls`` + ``update``), and a bare
generator resume. ``--profile NAME`` prints a cProfile of one full episode.

Optionally (``--peer-venv``, default ``/work/helpers/bestarm-venv``, run only if it
exists) it measures the PyPI library ``best-arm`` (LUCB1 and lil'UCB, best arm only)
on the same instance with K = 1, in its own interpreter, against our ``lucb`` and
``lil_ucb`` at K = 1. Its runs are capped at ``--peer-samples`` samples (its
per-sample cost is O(N) Python).

Usage::

    python benchmarks/lucb_speed.py                       # defaults below
    python benchmarks/lucb_speed.py --n-arms 1000 --k 2 --repeats 3 --profile lucb_pp
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import subprocess
import sys
import textwrap
import time
from collections.abc import Generator

import gymnasium as gym
import numpy as np

import agents
import bandit_envs  # noqa: F401  (registers the environments)
from agents.base import PullOne, ScriptedAgent

INSTANCE = "jiang2017-1-sparse"
AGENTS = (
    ("lil_rand_lucb", {"variant": "faithful"}),
    ("lil_rand_lucb", {"variant": "heuristic"}),
    ("lucb_pp", {"variant": "faithful"}),
    ("lucb_pp", {"variant": "heuristic"}),
    ("lil_lucb", {"variant": "faithful"}),
    ("lil_clucb", {"variant": "faithful"}),
    ("lucb", {}),
)
TARGET = 100_000
#: CPU time of this process: on a shared machine wall time also counts the time spent
#: waiting for a core. ``--wall`` switches to wall-clock time.
clock = time.process_time


def make_env(n_arms: int, k: int, max_batches: int | None = None) -> gym.Env:
    """The issue's environment (standard one-pull-per-step model)."""
    return gym.make(
        "TopK-Batch-v0",
        instance=INSTANCE,
        n_arms=n_arms,
        k=k,
        batch_size=1,
        setting="fixed_confidence",
        answer="agent",
        max_batches=max_batches,
    )


def label(name: str, params: dict) -> str:
    return name + (f"[{params['variant']}]" if "variant" in params else "")


# ------------------------------------------------------------------- full path
def full_path(
    name: str, params: dict, n_arms: int, k: int, seed: int, max_batches: int | None = None
) -> tuple[int, float]:
    """(samples, seconds) of one ``run_episode``."""
    env = make_env(n_arms, k, max_batches)
    agent = agents.make(name, **params)
    start = clock()
    res = agents.run_episode(env, agent, seed=seed)
    return res.pulls, clock() - start


# ------------------------------------------------------------------ agent only
def _pulls(req) -> list[tuple[int, int]]:
    """``(arm, reps)`` pairs of a request."""
    if type(req) is PullOne:
        return [(req.arm, 1)]
    return list(zip(req.arms.tolist(), req.reps.tolist(), strict=True))


def agent_only(
    name: str, params: dict, n_arms: int, k: int, seed: int, max_samples: int = 10**8
) -> tuple[int, float]:
    """(samples, seconds) of the agent's generator driven by a minimal stub (no base, no env)."""
    env = make_env(n_arms, k)
    env.reset(seed=seed)
    problem = env.unwrapped.problem
    mu = env.unwrapped._means.tolist()  # the episode's (shuffled) true means
    sigma = problem.sigma
    agent = agents.make(name, **params)
    agent.reset(problem, seed=seed)
    gen = agent._gen
    counts, means = agent.counts, agent.means
    rng = np.random.default_rng(seed + 12345)
    sums = [0.0] * n_arms
    noise: list[float] = []
    samples = 0
    start = clock()
    req = next(gen)
    try:
        while samples < max_samples:
            pulls = _pulls(req)
            for i, r in pulls:
                for _ in range(r):
                    if not noise:
                        noise = rng.standard_normal(65536).tolist()
                    sums[i] += mu[i] + sigma * noise.pop()
                c = int(counts[i]) + r
                counts[i] = c
                means[i] = sums[i] / c
                samples += r
            agent.total_pulls = samples
            req = gen.send(None)
    except StopIteration:
        pass
    return samples, clock() - start


# ------------------------------------------------------------- bare driver
def bare_driver(name: str, params: dict, n_arms: int, k: int, seed: int) -> tuple[int, float]:
    """(samples, seconds) with the env's internal one-pull step and no framework: a floor.

    The agent's generator yields, the driver calls the env's internal one-pull step
    (``_sample_one``: draw + counts/means, the env's real bookkeeping) and copies the
    arm's count and mean into the agent. No validation, no base class, no observation.
    """
    env = make_env(n_arms, k)
    env.reset(seed=seed)
    base = env.unwrapped
    agent = agents.make(name, **params)
    agent.reset(base.problem, seed=seed)
    gen = agent._gen
    counts, means = agent.counts, agent.means
    env_counts, env_means = base._counts, base._emp
    one = base._sample_one
    samples = 0
    start = clock()
    req = next(gen)
    try:
        while True:
            pulls = _pulls(req)
            for i, r in pulls:
                for _ in range(r):
                    one(i)
                counts[i] = env_counts[i]
                means[i] = env_means[i]
                samples += r
            agent.total_pulls = samples
            req = gen.send(None)
    except StopIteration:
        pass
    return samples, clock() - start


# ----------------------------------------------------------- framework costs
class _Idle(ScriptedAgent):
    """Does no work: asks for one pull of arm 0 forever (a cached request)."""

    name = "idle"

    def _run(self) -> Generator[PullOne, None, np.ndarray]:
        req = PullOne(0)
        while True:
            yield req


def _per_call(fn, calls: int) -> float:
    start = clock()
    fn(calls)
    return (clock() - start) / calls * 1e6


def framework_costs(n_arms: int, k: int, calls: int = 100_000) -> dict[str, float]:
    """Microseconds per call of the framework pieces a one-pull request goes through."""
    out: dict[str, float] = {}
    # whole runner loop with an agent that does nothing (truncated by max_batches)
    env = make_env(n_arms, k, max_batches=calls)
    start = clock()
    res = agents.run_episode(env, _Idle(), seed=0)
    out["run_episode loop per sample (idle agent)"] = (clock() - start) / res.pulls * 1e6

    # the env's one-pull steps alone
    env = make_env(n_arms, k)
    env.reset(seed=0)
    base = env.unwrapped
    arms1, reps1 = np.array([3], dtype=np.int64), np.ones(1, dtype=np.int64)

    def env_one(m: int) -> None:
        step = base.step_one
        for _ in range(m):
            step(3)

    out["env.step_one(arm)"] = _per_call(env_one, calls)

    def env_core(m: int) -> None:
        one = base._sample_one  # the draw + bookkeeping step_one ends in (internal)
        for _ in range(m):
            one(3)

    out["  of which env._sample_one (draw + counts/means)"] = _per_call(env_core, calls)

    def env_steps(m: int) -> None:
        step = base.step_sparse
        for _ in range(m):
            step(arms1, reps1)

    out["env.step_sparse([arm], [1]) (the general sparse step)"] = _per_call(env_steps, calls)

    # base class alone, fed fake env arrays
    agent = _Idle()
    agent.reset(base.problem, seed=0)
    fake_counts = np.ones(n_arms, dtype=np.int64)
    fake_means = np.zeros(n_arms)

    def base_one(m: int) -> None:
        nxt, upd = agent.next_step, agent.update_one
        for _ in range(m):
            upd(nxt(), fake_counts, fake_means)

    out["base next_step + update_one (incl. generator resume)"] = _per_call(base_one, calls)

    def base_steps(m: int) -> None:
        nxt, upd = agent.next_pulls, agent.update
        for _ in range(m):
            a, r = nxt()
            upd(a, r, fake_counts, fake_means)

    out["base next_pulls + update (array protocol)"] = _per_call(base_steps, calls)
    a1, r1 = agent.next_pulls()

    def base_updates(m: int) -> None:
        upd = agent.update
        for _ in range(m):
            upd(a1, r1, fake_counts, fake_means)

    out["  of which update alone"] = _per_call(base_updates, calls)

    def gen_resumes(m: int) -> None:
        g = _Idle()._run()
        for _ in range(m):
            next(g)

    out["bare generator resume (next(gen))"] = _per_call(gen_resumes, calls)

    def numpy_item(m: int) -> None:
        c = fake_counts
        for _ in range(m):
            c.item(3)

    out["one ndarray.item() read (agent reads counts/means)"] = _per_call(numpy_item, calls)
    return out


# ------------------------------------------------------------------------ peer
PEER_SCRIPT = textwrap.dedent(
    """
    import sys, time, json
    import numpy as np
    from best_arm.environment import NormalEnvironment
    from best_arm.algorithms.lucb1 import LUCB1
    from best_arm.algorithms.lil_ucb import LilUCB
    from best_arm.stopping_conditions import LUCBStoppingCondition

    n, cap, delta = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])

    class Cap(Exception):
        pass

    class Env(NormalEnvironment):
        def __init__(self, mu, sigma):  # no print, fixed means: 1-sparse, K = 1
            self.num_arms, self.mu, self.sigma, self.samples = len(mu), list(mu), sigma, 0
        def sample(self, arm):
            self.samples += 1
            if self.samples > cap:
                raise Cap()
            return float(np.random.randn() * self.sigma + self.mu[arm])

    mu = [0.5] + [0.0] * (n - 1)
    out = {}
    for label, build in (
        ("best-arm LUCB1", lambda e: LUCB1(e, delta, LUCBStoppingCondition(epsilon=0.0))),
        ("best-arm lil'UCB (theory)", lambda e: LilUCB(e, delta, mode="theory")),
        ("best-arm lil'UCB (heuristic)", lambda e: LilUCB(e, delta, mode="heuristic")),
    ):
        np.random.seed(0)
        env = Env(mu, 0.5)
        algo = build(env)
        start = time.process_time()
        try:
            algo.run()
        except Cap:
            pass
        dt = time.process_time() - start
        done = min(env.samples, cap)
        out[label] = [done, dt]
    print(json.dumps(out))
    """
)


def peer(venv: str, n_arms: int, cap: int, delta: float) -> dict[str, list[float]] | None:
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        return None
    proc = subprocess.run(
        [python, "-c", PEER_SCRIPT, str(n_arms), str(cap), str(delta)],
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    if proc.returncode != 0:
        print(f"peer run failed:\n{proc.stderr[-2000:]}")
        return None
    import json

    return json.loads(proc.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-arms", type=int, default=1000)
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument(
        "--repeats", type=int, default=2, help="episodes per agent (seeds 0..repeats-1)"
    )
    ap.add_argument(
        "--agents", default=None, help="comma-separated registry names (default: the family)"
    )
    ap.add_argument(
        "--calls", type=int, default=100_000, help="calls per framework micro-benchmark"
    )
    ap.add_argument("--profile", default=None, help="cProfile one full episode of this agent name")
    ap.add_argument("--peer-venv", default="/work/helpers/bestarm-venv")
    ap.add_argument("--peer-samples", type=int, default=3000, help="sample cap of each peer run")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument(
        "--wall", action="store_true", help="time with the wall clock instead of CPU time"
    )
    args = ap.parse_args(argv)
    global clock
    if args.wall:
        clock = time.perf_counter
    n, k = args.n_arms, args.k
    todo = AGENTS if args.agents is None else tuple((a, {}) for a in args.agents.split(","))

    print(
        f"instance {INSTANCE}, N = {n}, K = {k}, batch_size = 1, fixed confidence; "
        f"target {TARGET:,} samples/s"
    )
    print(f"times: {'wall clock' if args.wall else 'CPU time of this process'}")
    print(
        f"{'agent':28s} {'samples':>9s} {'full /s':>10s} {'agent-only /s':>14s} "
        f"{'agent us/sample':>16s} {'bare driver /s':>15s}"
    )
    for name, params in todo:
        best_full = best_alone = best_bare = 0.0
        samples = 0
        for seed in range(args.repeats):
            s, dt = full_path(name, params, n, k, seed)
            best_full = max(best_full, s / dt)
            s2, dt2 = agent_only(name, params, n, k, seed)
            best_alone = max(best_alone, s2 / dt2)
            s3, dt3 = bare_driver(name, params, n, k, seed)
            best_bare = max(best_bare, s3 / dt3)
            samples = s
        mark = "  <- target met" if best_full > TARGET else ""
        print(
            f"{label(name, params):28s} {samples:9d} {best_full:10,.0f} {best_alone:14,.0f} "
            f"{1e6 / best_alone:16.2f} {best_bare:15,.0f}{mark}"
        )

    print("\nframework cost per sample (us), idle agent, PullOne requests:")
    costs = framework_costs(n, k, args.calls)
    for key, val in costs.items():
        print(f"  {key:55s} {val:8.2f}")
    loop = costs["run_episode loop per sample (idle agent)"]
    print(f"  => ceiling of any agent through run_episode: {1e6 / loop:,.0f} samples/s")

    if not args.no_peer:
        venv = args.peer_venv
        if not os.path.exists(os.path.join(venv, "bin", "python")):
            print(
                f"\npeer library: no venv at {venv} "
                f"(python -m venv {venv} && {venv}/bin/pip install best-arm)"
            )
        else:
            print(
                f"\npeer library best-arm (K = 1, same instance, "
                f"first {args.peer_samples} samples):"
            )
            got = peer(venv, n, args.peer_samples, 0.01)
            ours = {}
            for name, params in (
                ("lucb", {}),
                ("lil_ucb", {"variant": "faithful"}),
                ("lil_ucb", {"variant": "heuristic"}),
            ):
                rates = []
                for seed in range(args.repeats):
                    s, dt = full_path(name, params, n, 1, seed, max_batches=20 * n)
                    rates.append(s / dt)
                ours[label(name, params)] = max(rates)
            if got:
                pairs = (
                    ("best-arm LUCB1", "lucb"),
                    ("best-arm lil'UCB (theory)", "lil_ucb[faithful]"),
                    ("best-arm lil'UCB (heuristic)", "lil_ucb[heuristic]"),
                )
                for theirs, mine in pairs:
                    s, dt = got[theirs]
                    rate = s / dt
                    print(
                        f"  {theirs:30s} {rate:10,.0f} /s   ours {mine:20s} "
                        f"{ours[mine]:10,.0f} /s   ratio {ours[mine] / rate:8.1f}x"
                    )

    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        full_path(args.profile, {}, n, k, 0)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main(sys.argv[1:])
