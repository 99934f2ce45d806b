"""Seeded episodes of every registered agent are pinned by a fingerprint.

For each agent, a SHA-256 digest of a grid of seeded episodes (both ids, both settings
where the agent plays them, one pull per step, batches and ``batch_size=None``,
Bernoulli and Gaussian rewards): the recommendation, pulls, batches, reward, the
environment's final pull counts and reward sums. The digests live in
``tests/data/episode_fingerprints.json``; a change of an agent's law (or a refactor that
changes a draw) changes its digest and fails here.

A deliberate change of law regenerates the file::

    TOPK_UPDATE_FINGERPRINTS=1 python -m pytest -n 0 tests/test_episode_fingerprints.py
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs

FILE = Path(__file__).parent / "data" / "episode_fingerprints.json"
UPDATE = os.environ.get("TOPK_UPDATE_FINGERPRINTS") == "1"

#: (env id, n, k, batch_size, repeat_limit, distribution)
GRID: list[tuple[str, int, int, int | None, int | None, str]] = [
    ("TopK-v0", 7, 1, None, None, "bernoulli"),
    ("TopK-v0", 9, 3, None, None, "gaussian"),
    ("TopK-Batch-v0", 8, 1, 4, 2, "gaussian"),
    ("TopK-Batch-v0", 10, 3, 6, 3, "bernoulli"),
    ("TopK-Batch-v0", 9, 2, None, 2, "bernoulli"),
    ("TopK-Batch-v0", 3, 1, 1, 1, "bernoulli"),
]
SEEDS = (0, 1)


def _instance(n: int, k: int, dist: str) -> Any:
    rng = np.random.default_rng(1000 + 17 * n + k)
    means = np.sort(rng.uniform(0.25, 0.75, size=n))[::-1].copy()
    means[k:] -= 0.15
    sigma = 0.5 if dist == "gaussian" else None
    return bandit_envs.instances.from_means(means, k=k, distribution=dist, sigma=sigma)


def _env(env_id: str, setting: str, n: int, k: int, b: int | None, r: int | None, dist: str):
    kwargs: dict[str, Any] = dict(instance=_instance(n, k, dist), setting=setting, paired=True)
    if env_id == "TopK-Batch-v0":
        kwargs.update(batch_size=b, repeat_limit=r, answer="agent")
    if setting == "fixed_budget":
        kwargs["budget"] = 30 * n if n > 3 else 20
    else:
        kwargs["max_batches"] = 3000
    return gym.make(env_id, **kwargs)


def _params(name: str, setting: str) -> dict[str, Any]:
    if name == "uniform" and setting == "fixed_confidence":
        return {"rounds": 30}
    if name == "median_elimination":
        return {"epsilon": 4.0, "delta": 0.5}
    if name == "exp_gap":
        return {"delta": 0.5}
    return {}


def _playable(name: str, env_id: str, setting: str, n: int, k: int, dist: str) -> bool:
    cls = agents.agent_class(name)
    if setting not in cls.settings:
        return False
    if cls.k_values is not None and k not in cls.k_values:
        return False
    if cls.distributions is not None and dist not in cls.distributions:
        return False
    if name == "bayes_dp":  # the exact DP plays tiny families only
        return n == 3
    return True


def fingerprint(name: str) -> str:
    """The digest of ``name``'s seeded episodes over :data:`GRID` and both settings."""
    digest = hashlib.sha256()
    for setting in ("fixed_budget", "fixed_confidence"):
        for env_id, n, k, b, r, dist in GRID:
            if not _playable(name, env_id, setting, n, k, dist):
                continue
            env = _env(env_id, setting, n, k, b, r, dist)
            for seed in SEEDS:
                res = agents.run_episode(
                    env, agents.make(name, **_params(name, setting)), seed=seed
                )
                base = env.unwrapped
                digest.update(
                    repr(
                        (
                            setting,
                            env_id,
                            n,
                            k,
                            b,
                            seed,
                            res.recommendation.tolist(),
                            res.pulls,
                            res.batches,
                            float(res.reward).hex(),
                            base._counts.tolist(),
                            [float(x).hex() for x in base._sums],
                        )
                    ).encode()
                )
    return digest.hexdigest()


def _names() -> list[str]:
    return agents.available()


@pytest.fixture(scope="module")
def pinned() -> dict[str, str]:
    if UPDATE:
        table = {name: fingerprint(name) for name in _names()}
        FILE.parent.mkdir(exist_ok=True)
        FILE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        return table
    return json.loads(FILE.read_text())


def test_every_agent_is_pinned(pinned: dict[str, str]) -> None:
    assert sorted(pinned) == _names()


@pytest.mark.parametrize("name", _names())
def test_seeded_episodes_match_their_fingerprint(name: str, pinned: dict[str, str]) -> None:
    assert fingerprint(name) == pinned[name], (
        f"{name}: seeded episodes changed; if the change of law is deliberate, regenerate "
        "with TOPK_UPDATE_FINGERPRINTS=1"
    )
