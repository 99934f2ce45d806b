"""invalid_action="project": the documented, deterministic map into A."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bandit_envs.top_k_batch import project_answer, project_pulls


def test_projection_rule_by_hand() -> None:
    # clip to r=2: [2, 2, 2, 1, 0] (sum 7); cap 4: scaled 8/7 x -> [1.14, 1.14, 1.14, .57, 0]
    # floors [1, 1, 1, 0, 0] (3), one pull left -> largest fraction: arm 3 (0.57)
    out = project_pulls(np.array([5, 2, 2, 1, -3]), repeat_limit=2, cap=4)
    assert out.tolist() == [1, 1, 1, 1, 0]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-5, 9), min_size=1, max_size=15),
    st.integers(1, 8),
    st.integers(1, 30),
)
def test_projection_lands_in_a(values: list[int], r: int, cap: int) -> None:
    a = np.array(values)
    out = project_pulls(a, r, cap)
    clipped = np.clip(a, 0, r)
    assert np.all(out >= 0) and np.all(out <= clipped)
    assert out.sum() == min(cap, clipped.sum())
    assert np.array_equal(out, project_pulls(a, r, cap))  # deterministic


def test_answer_projection() -> None:
    emp = np.array([0.1, 0.9, 0.5, 0.5])
    assert project_answer(np.array([1, 1, 1, 1]), 2, emp).tolist() == [
        1,
        2,
    ]  # ties -> higher mean, lower index
    assert project_answer(np.array([0, 0, 3, 1]), 1, emp).tolist() == [2]


def test_env_reports_pulls_made_and_respects_budget() -> None:
    env = gym.make(
        "TopK-Batch-v0",
        n_arms=10,
        k=3,
        batch_size=4,
        repeat_limit=2,
        budget=30,
        invalid_action="project",
        answer="agent",
    )
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    total = 0
    while True:
        action = rng.integers(0, 3, size=10)
        obs, r, term, trunc, info = env.step(action)
        if "pulls_made" in info:
            made = info["pulls_made"]
            assert made.sum() <= 4 and made.max() <= 2
            total += made.sum()
            assert obs["counts"].sum() == total
        if term or trunc:
            break
    assert info["pulls"] == 30 and len(info["recommendation"]) == 3
