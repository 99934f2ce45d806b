"""The Gymnasium path's cost: agents through act/observe, beside the env step and the fast path.

Two measurements, one core:

1. Compiled agents on ``TopK-Batch-v0`` (n = 1000, k = 10, one pull per step,
   ``batch_size=1``, fixed budget 20n, Bernoulli two-level means): per step, the agent's
   own time in ``act`` + ``observe`` (the env's ``step`` timed apart), the bare env step
   with a precomputed action, and the fast path's time per pull
   (``agents.run_episode``), all on the same episodes.
2. A Python agent that does nothing (a ``_run`` generator yielding ``PullOne`` round
   robin) through ``agents.run_episode`` on ``TopK-v0`` (n = 100, budget 200,000): pulls
   per second of the whole loop, beside the bare ``env.step`` loop.

Figures are CPU time (``time.process_time``), best of ``--repeat`` episodes after a
warm-up episode (compilation excluded)::

    python benchmarks/gym_path_speed.py                 # the agents of the default list
    python benchmarks/gym_path_speed.py --agents lucb uniform --repeat 5
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import agents
import bandit_envs  # noqa: F401  (registers the envs)
from agents.base import PullOne, ScriptedAgent

DEFAULT_AGENTS = ("uniform", "sar", "halving", "lucb", "lil_rand_lucb", "kl_lucb", "eb_tc")


def _batch_env(n: int) -> gym.Env:
    means = np.full(n, 0.5)
    means[: n // 100] = 0.6
    return gym.make(
        "TopK-Batch-v0",
        instance=means,
        k=max(1, n // 100),
        budget=20 * n,
        batch_size=1,
        repeat_limit=1,
        answer="agent",
    )


def _act_observe(env: gym.Env, agent: agents.Agent, seed: int) -> tuple[int, float, float]:
    """One episode through act/observe: ``(steps, agent seconds, env seconds)``."""
    obs, _ = env.reset(seed=seed)
    agent.reset(env.unwrapped.problem, seed=seed)
    clock = time.process_time
    t_agent = t_env = 0.0
    steps = 0
    while True:
        t0 = clock()
        action = agent.act(obs)
        t1 = clock()
        next_obs, reward, terminated, truncated, info = env.step(action)
        t2 = clock()
        agent.observe(action, next_obs, float(reward), terminated, truncated, info)
        t3 = clock()
        t_agent += (t1 - t0) + (t3 - t2)
        t_env += t2 - t1
        steps += 1
        obs = next_obs
        if terminated or truncated:
            return steps, t_agent, t_env


def _bare_steps(env: gym.Env, n: int, steps: int, seed: int) -> float:
    """Seconds per ``env.step`` of precomputed one-pull actions (no agent)."""
    env.reset(seed=seed)
    actions = []
    for i in range(steps):
        a = np.zeros(n, dtype=np.int64)
        a[i % n] = 1
        actions.append(a)
    t0 = time.process_time()
    for a in actions:
        env.step(a)
    return (time.process_time() - t0) / steps


def compiled_agents(names: list[str], n: int, repeat: int) -> None:
    env = _batch_env(n)
    print(f"1. act/observe on TopK-Batch-v0, n = {n}, one pull per step, budget {20 * n}")
    print(f"{'agent':<16}{'agent us/step':>15}{'env us/step':>13}{'fast us/pull':>14}")
    for name in names:
        agent = agents.make(name)
        _act_observe(env, agent, seed=0)  # warm-up: compile the generator's Python entry
        agents.run_episode(env, agent, seed=0)  # ... and the fast path
        best_agent = best_env = best_fast = np.inf
        for rep in range(repeat):
            steps, t_agent, t_env = _act_observe(env, agent, seed=1 + rep)
            best_agent = min(best_agent, t_agent / steps)
            best_env = min(best_env, t_env / steps)
            t0 = time.process_time()
            result = agents.run_episode(env, agent, seed=1 + rep)
            best_fast = min(best_fast, (time.process_time() - t0) / max(1, result.pulls))
        print(f"{name:<16}{best_agent * 1e6:>15.2f}{best_env * 1e6:>13.2f}{best_fast * 1e6:>14.3f}")
    bare = min(_bare_steps(env, n, 20_000, seed=rep) for rep in range(repeat))
    print(f"{'(bare env.step)':<16}{'':>15}{bare * 1e6:>13.2f}")


class DoNothing(ScriptedAgent):
    """Pulls the arms round robin and does nothing else (a Python ``_run``)."""

    name = "do_nothing"
    settings = frozenset({"fixed_budget"})

    def _run(self):
        n = self.problem.n_arms
        requests = [PullOne(a) for a in range(n)]
        i = 0
        while True:
            yield requests[i]
            i = i + 1 if i + 1 < n else 0


def python_agent(n: int, budget: int, repeat: int) -> None:
    env = gym.make("TopK-v0", n_arms=n, k=3, budget=budget)
    agent = DoNothing()
    agents.run_episode(env, agent, seed=0)
    best = np.inf
    for rep in range(repeat):
        t0 = time.process_time()
        result = agents.run_episode(env, agent, seed=1 + rep)
        best = min(best, (time.process_time() - t0) / result.pulls)
    env.reset(seed=0)
    t0 = time.process_time()
    for i in range(budget):
        env.step(i % n)
    bare = (time.process_time() - t0) / budget
    print(f"\n2. a do-nothing Python agent through run_episode on TopK-v0, n = {n}")
    print(
        f"   {1 / best:,.0f} pulls/s ({best * 1e6:.2f} us/pull); bare env.step {bare * 1e6:.2f} us"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="*", default=list(DEFAULT_AGENTS))
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    compiled_agents(args.agents, args.n, args.repeat)
    python_agent(100, 200_000, args.repeat)


if __name__ == "__main__":
    main()
