"""Packaging guards: the right `agents` package, the registry, the doctests."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import gymnasium as gym
import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_agents_is_this_projects_package() -> None:
    # openai-agents also installs a top-level `agents`; make sure we import ours.
    import agents

    assert Path(agents.__file__).resolve().is_relative_to(ROOT), agents.__file__
    assert hasattr(agents, "run_episode")


def test_import_registers_both_ids_idempotently() -> None:
    import bandit_envs

    bandit_envs._register_envs()
    assert {"TopK-v0", "TopK-Batch-v0"} <= set(gym.registry)


@pytest.mark.parametrize(
    "module",
    [
        "bandit_envs.top_k",
        "bandit_envs.top_k_batch",
        "bandit_envs.scoring",
        "bandit_envs.instances",
        "bandit_envs.vector",
        "bandit_envs.sb3",
    ],
)
def test_doctests(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
