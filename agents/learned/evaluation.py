"""Evaluating agents on a training family: held-out seeds, summaries with 95% intervals.

Periodic evaluation (validation) uses the seeds :data:`VALIDATION_SEED0` + ``j``;
held-out evaluation (:func:`compare`) uses :data:`TEST_SEED0` + ``j``. Episodes run
through :func:`agents.run_episode` on :func:`~agents.learned.families.evaluation_env`
of the family, so scripted agents and learned policies play the same episodes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

import bandit_envs  # noqa: F401  (registers the ids)
from agents.base import Agent
from agents.learned.families import evaluation_env
from agents.registry import make
from agents.runner import EpisodeResult, run_episode

__all__ = [
    "TABLE_HEADER",
    "TEST_SEED0",
    "VALIDATION_SEED0",
    "Summary",
    "compare",
    "evaluate",
    "summarize",
]

VALIDATION_SEED0 = 100_000_000
TEST_SEED0 = 200_000_000

TABLE_HEADER = (
    "| agent | episodes | mean regret ± 95% CI | misidentification [95% CI] | pulls |\n"
    "| --- | --- | --- | --- | --- |"
)


@dataclass(frozen=True)
class Summary:
    """Mean aggregate regret and misidentification rate with 95% intervals."""

    agent: str
    episodes: int
    regret: float
    regret_ci: float  # half-width, normal approximation
    misid: float
    misid_low: float  # Wilson score interval
    misid_high: float
    pulls: float

    def row(self) -> str:
        """One Markdown table row."""
        return (
            f"| {self.agent} | {self.episodes} | {self.regret:.4f} ± {self.regret_ci:.4f} | "
            f"{self.misid:.3f} [{self.misid_low:.3f}, {self.misid_high:.3f}] | {self.pulls:.0f} |"
        )


def summarize(agent: str, results: Sequence[EpisodeResult]) -> Summary:
    """:class:`Summary` of ``results``."""
    n = len(results)
    if n == 0:
        raise ValueError("no results to summarize")
    regret = np.array([r.aggregate_regret for r in results])
    mis = np.array([r.misidentified for r in results], dtype=float)
    ci = 1.96 * regret.std(ddof=1) / math.sqrt(n) if n > 1 else math.inf
    p, z = mis.mean(), 1.96
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Summary(
        agent,
        n,
        float(regret.mean()),
        float(ci),
        float(p),
        float(max(0.0, centre - half)),
        float(min(1.0, centre + half)),
        float(np.mean([r.pulls for r in results])),
    )


def evaluate(
    agent: Agent | Callable[[], Agent],
    env_id: str,
    env_kwargs: Mapping[str, Any],
    seeds: Iterable[int],
) -> list[EpisodeResult]:
    """Play ``agent`` (or a fresh one from a factory) for each seed with :func:`run_episode`.

    ``env_id``/``env_kwargs`` are used as given: pass :func:`evaluation_env` of a
    training family to compare with scripted agents.
    """
    env = gym.make(env_id, **env_kwargs)
    player = agent if isinstance(agent, Agent) else agent()
    try:
        return [run_episode(env, player, seed=int(s)) for s in seeds]
    finally:
        env.close()


def compare(
    players: Mapping[str, Agent | Callable[[], Agent]] | Sequence[str],
    env_id: str,
    env_kwargs: Mapping[str, Any],
    episodes: int,
    *,
    seed0: int = TEST_SEED0,
    log: Callable[[str], None] | None = None,
) -> list[Summary]:
    """Every player on the same ``episodes`` held-out seeds ``seed0 + j`` of a training family.

    ``players`` maps a label to an agent (or a factory); a list of names is built with
    :func:`agents.make` (``"ppo:PATH"`` included). Episodes run on
    :func:`evaluation_env` of ``(env_id, env_kwargs)``.
    """
    if not isinstance(players, Mapping):
        players = {name: (lambda name=name: make(name)) for name in players}
    eid, ekw = evaluation_env(env_id, env_kwargs)
    seeds = range(seed0, seed0 + episodes)
    rows = []
    for label, player in players.items():
        start = time.perf_counter()
        rows.append(summarize(label, evaluate(player, eid, ekw, seeds)))
        if log is not None:
            log(f"{rows[-1].row()}  ({time.perf_counter() - start:.0f}s)")
    return rows
