"""The worker side: play a chunk of episodes and turn each into a result row.

A :class:`Chunk` is a batch of episodes of one agent at one point (one environment and
one agent object serve all of them), so that the scheduling cost of a task is paid
once per chunk, not once per episode. :func:`run_chunk` is what the process and Ray
backends execute; it needs only numpy, gymnasium and the project (no pyarrow).

Seeding (see :mod:`topk_bench.seeds`): before each episode the environment's generator
is set to exactly what ``env.reset(seed=env_seed)`` would create and the agent's
``seed`` attribute to its own seed; :func:`agents.run_episode` is then called with
``seed=None`` so that it keeps both.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import load_env_creator
from gymnasium.utils import seeding

import agents
import bandit_envs  # noqa: F401  (registers the environment ids)

__all__ = [
    "BINARY_METRICS",
    "Chunk",
    "METRICS",
    "METRIC_RANGES",
    "OPTIONAL_COLUMNS",
    "ROW_COLUMNS",
    "TIMING_COLUMNS",
    "run_chunk",
]

#: Metric name -> meaning. Every row holds all of them.
METRICS: dict[str, str] = {
    "aggregate_regret": "aggregate regret of the answer (zhou2014 eq. 1)",
    "misidentified": "1 if the answer is not a top-k set (shahrampour2017)",
    "precision": "|answer & top-k| / k (zhou2014 Sec. 6.2)",
    "fnr": "false negative rate 1 - precision (jun2016 Sec. 5.2)",
    "failure": "1 if aggregate regret > epsilon (chen2017 'failure probability'; needs epsilon)",
    "pulls": "pulls used",
    "batches": "batches (steps) used",
    "reward": "episode return",
    "max_pulls_per_arm": "most pulls of one arm (zhou2014 Fig. 2(e-f))",
    "normalized_pulls": (
        "pulls / (T*(mu) log(1/delta)): samples in units of the fixed-confidence lower bound "
        "(Garivier & Kaufmann 2016; bandit_envs.hardness.characteristic_time); NaN in fixed "
        "budget, for agents without a delta, for categorical rewards or where T* is not computed"
    ),
    "truncated": "1 if the episode was truncated (fixed confidence, max_batches reached)",
}
#: Metrics that are 0/1 per episode (their confidence interval is Wilson's).
BINARY_METRICS = frozenset({"misidentified", "failure", "truncated"})
#: The range every episode's value of a metric lies in (so its mean does too); the
#: summary intersects confidence intervals with it. Metrics not listed are unbounded.
METRIC_RANGES: dict[str, tuple[float, float]] = {
    "aggregate_regret": (0.0, math.inf),
    "misidentified": (0.0, 1.0),
    "precision": (0.0, 1.0),
    "fnr": (0.0, 1.0),
    "failure": (0.0, 1.0),
    "pulls": (0.0, math.inf),
    "batches": (0.0, math.inf),
    "max_pulls_per_arm": (0.0, math.inf),
    "normalized_pulls": (0.0, math.inf),
    "truncated": (0.0, 1.0),
}

#: Columns of a result row, in order.
ROW_COLUMNS: tuple[str, ...] = (
    "experiment",
    "point",
    "panel",
    "x",
    "x_value",
    "agent",
    "agent_name",
    "params",
    "run",
    "seed",
    "agent_seed",
    "aggregate_regret",
    "misidentified",
    "precision",
    "fnr",
    "failure",
    "max_pulls_per_arm",
    "reward",
    "pulls",
    "batches",
    "terminated",
    "truncated",
    "wall_time",
    "recommendation",
    "normalized_pulls",
    "warmup",
)
#: Columns added after results were first written: a part without them reads as NaN.
OPTIONAL_COLUMNS = frozenset({"normalized_pulls", "warmup"})
#: Columns that describe how an episode ran, not what happened in it: they depend on
#: the scheduling (which worker, in which order), so equal runs may differ in them.
TIMING_COLUMNS = ("wall_time", "warmup")

#: The agents (name and parameters) this process has played: the first episode of each
#: in a process also compiles its code or loads it from numba's cache, so its row is
#: flagged ``warmup`` and the report counts its time apart from play time.
_WARMED: set[str] = set()


@dataclass(frozen=True)
class Chunk:
    """Episodes of one agent at one point (all fields are plain, picklable data)."""

    experiment: str
    point: str
    panel: str
    x: str
    x_value: float
    env_id: str
    env_kwargs: Mapping[str, Any]
    agent: str
    agent_name: str
    agent_params: Mapping[str, Any]
    runs: tuple[int, ...]
    env_seeds: tuple[int, ...]
    agent_seeds: tuple[int, ...]
    max_steps: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    #: ``module:Class`` of a third-party agent (workers build it from this rather than
    #: from ``agent_name``, which a spawned or Ray worker's registry may not know).
    agent_target: str | None = None

    def __len__(self) -> int:
        return len(self.runs)


def takes_invalid_action(env_id: str) -> bool:
    """Whether the env registered as ``env_id`` (``"module:id"`` too) has ``invalid_action``."""
    module, _, name = env_id.rpartition(":")
    if module:
        importlib.import_module(module)
    entry_point = gym.spec(name).entry_point
    creator = load_env_creator(entry_point) if isinstance(entry_point, str) else entry_point
    try:
        parameters = inspect.signature(creator).parameters
    except (TypeError, ValueError):  # pragma: no cover - a builtin callable
        return False
    return "invalid_action" in parameters


def make_env(env_id: str, env_kwargs: Mapping[str, Any]) -> gym.Env:
    """The point's environment (env checker off: the envs are tested on their own).

    Envs with an ``invalid_action`` argument are made in the strict mode
    (``invalid_action="raise"``) unless ``env_kwargs`` names a mode: an agent's invalid
    action raises (and the episode fails, naming it) instead of being projected, so
    scripted agents' bugs surface. Learned policies play these envs too: they map
    their actions into the valid set themselves (:class:`agents.learned.PolicyAgent`).
    """
    kwargs = dict(env_kwargs)
    if "invalid_action" not in kwargs and takes_invalid_action(env_id):
        kwargs["invalid_action"] = "raise"
    return gym.make(env_id, disable_env_checker=True, **kwargs)


_POLICY_CACHE: dict[str, Any] = {}


def make_agent(name: str, params: Mapping[str, Any], target: str | None = None) -> Any:
    """``agents.make(target or name, **params)``, with two extras for saved policies (``ppo:PATH``).

    A policy with its metadata sidecar (``PATH`` with ``.json``, written by
    ``agents.learned``) is loaded with ``agents.learned.saving.load_policy``, so that it sees
    its training observation transform. A loaded policy is kept for the next chunks of
    this process (loading a model costs far more than an episode), and torch is limited
    to one thread per process (the workers already use every core).
    """
    from agents.learned.adapter import LOADERS

    prefix, sep, path = name.partition(":")
    if not (sep and prefix in LOADERS):
        return agents.make(target or name, **dict(params))
    key = json.dumps([name, dict(params)], sort_keys=True, default=str)
    if key not in _POLICY_CACHE:
        try:
            import torch

            torch.set_num_threads(1)
        except ImportError:  # pragma: no cover - stable-baselines3 needs torch
            pass
        agent = None
        if Path(path).with_suffix(".json").exists():
            try:
                from agents.learned.saving import load_policy
            except ImportError:  # training module absent: plain loading below
                pass
            else:
                agent = load_policy(path, prefix, **dict(params))
        _POLICY_CACHE[key] = agent if agent is not None else agents.make(name, **dict(params))
    return _POLICY_CACHE[key]


def _normalized_pulls(base: Any, agent: Any, pulls: int, cache: dict[Any, float]) -> float:
    """``pulls / (T*(mu) log(1/delta))`` of a fixed-confidence episode, else NaN.

    ``T*`` is computed on the episode's true means (:attr:`true_means` of the env) and
    cached per sorted means vector in ``cache`` (one chunk); rewards must be Bernoulli or
    Gaussian (the lower bound's one-parameter family), the agent must have a ``delta``.
    """
    problem = getattr(base, "problem", None)
    delta = getattr(agent, "delta", None)
    if (
        problem is None
        or problem.setting != "fixed_confidence"
        or not isinstance(delta, float)
        or problem.distribution not in ("bernoulli", "gaussian")
    ):
        return math.nan
    means = base.true_means
    key = (tuple(np.sort(means)), problem.k, problem.distribution, problem.sigma)
    if key not in cache:
        from bandit_envs.hardness import characteristic_time

        try:
            cache[key] = characteristic_time(means, problem.k, problem.distribution, problem.sigma)
        except ValueError:  # over the top-k solver's size limit
            cache[key] = math.nan
    t_star = cache[key]
    if not math.isfinite(t_star):
        return math.nan
    return pulls / (t_star * math.log(1.0 / delta))


def _row(
    chunk: Chunk,
    i: int,
    result: agents.EpisodeResult,
    counts: Any,
    epsilon: Any,
    normalized: float = math.nan,
    warmup: bool = False,
) -> dict[str, Any]:
    regret = float(result.aggregate_regret)
    failure = math.nan if epsilon is None else float(regret > float(epsilon))
    max_pulls = float(np.max(counts)) if counts is not None and np.size(counts) else math.nan
    return {
        "experiment": chunk.experiment,
        "point": chunk.point,
        "panel": chunk.panel,
        "x": chunk.x,
        "x_value": float(chunk.x_value),
        "agent": chunk.agent,
        "agent_name": chunk.agent_name,
        "params": json.dumps(dict(chunk.agent_params), sort_keys=True),
        "run": int(chunk.runs[i]),
        "seed": int(chunk.env_seeds[i]),
        "agent_seed": int(chunk.agent_seeds[i]),
        "aggregate_regret": regret,
        "misidentified": float(result.misidentified),
        "precision": float(result.precision),
        "fnr": 1.0 - float(result.precision),
        "failure": failure,
        "max_pulls_per_arm": max_pulls,
        "reward": float(result.reward),
        "pulls": int(result.pulls),
        "batches": int(result.batches),
        "terminated": bool(result.terminated),
        "truncated": bool(result.truncated),
        "wall_time": float(result.wall_time),
        "recommendation": " ".join(map(str, np.asarray(result.recommendation).tolist())),
        "normalized_pulls": float(normalized),
        "warmup": bool(warmup),
    }


class _SeededReset:
    """A duck-typed agent (not an :class:`agents.Agent`) whose ``reset`` gets the episode's
    agent seed (``run_episode(..., seed=None)`` passes ``None``; ``Agent.reset`` reads
    ``self.seed`` instead, a duck-typed agent may not). Everything else is the agent's.
    """

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.seed: int | None = None

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        self.agent.reset(problem, seed=self.seed if seed is None else seed)

    def act(self, observation: Any) -> Any:
        return self.agent.act(observation)

    def observe(self, *args: Any) -> None:
        self.agent.observe(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)


def run_chunk(chunk: Chunk) -> list[dict[str, Any]]:
    """Play every episode of ``chunk``; return one row per episode, in run order.

    An exception names the episode (point, agent, run, seeds) so it can be replayed.
    Every agent is reset with the episode's agent seed (an :class:`agents.Agent` through
    its ``seed`` attribute, any other agent as ``reset(problem, seed=...)``).
    """
    env = make_env(chunk.env_id, chunk.env_kwargs)
    try:
        agent = make_agent(chunk.agent_name, chunk.agent_params, chunk.agent_target)
        if not isinstance(agent, agents.Agent):
            agent = _SeededReset(agent)
        base = env.unwrapped
        epsilon = getattr(getattr(base, "problem", None), "epsilon", None)
        rows = []
        t_star_cache: dict[Any, float] = {}
        played = json.dumps(
            [chunk.agent_name, dict(chunk.agent_params)], sort_keys=True, default=str
        )
        for i in range(len(chunk.runs)):
            warmup = played not in _WARMED
            base.np_random = seeding.np_random(int(chunk.env_seeds[i]))[0]
            agent.seed = int(chunk.agent_seeds[i])
            try:
                result = agents.run_episode(env, agent, seed=None, max_steps=chunk.max_steps)
            except Exception as err:
                raise RuntimeError(
                    f"episode failed: experiment={chunk.experiment!r} point={chunk.point!r} "
                    f"agent={chunk.agent!r} run={chunk.runs[i]} env_seed={chunk.env_seeds[i]} "
                    f"agent_seed={chunk.agent_seeds[i]}: {type(err).__name__}: {err}"
                ) from err
            _WARMED.add(played)
            normalized = _normalized_pulls(base, agent, result.pulls, t_star_cache)
            counts = getattr(agent, "counts", None)
            rows.append(_row(chunk, i, result, counts, epsilon, normalized, warmup))
        return rows
    finally:
        env.close()
