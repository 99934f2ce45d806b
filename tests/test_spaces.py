"""The BatchPulls space: Jun et al.'s action set A as a gymnasium Space."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bandit_envs.spaces import BatchPulls


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 30), b=st.integers(1, 50), r=st.integers(1, 50), seed=st.integers(0, 2**16))
def test_samples_are_members(n: int, b: int, r: int, seed: int) -> None:
    r = min(r, b)
    space = BatchPulls(n, b, r, seed=seed)
    for _ in range(20):
        x = space.sample()
        assert space.contains(x) and x.sum() >= 1 and x.max() <= r and x.sum() <= b


def test_contains_checks_the_sum_and_the_entries() -> None:
    space = BatchPulls(4, batch_size=4, repeat_limit=2)
    assert space.contains(np.array([2, 2, 0, 0]))
    assert space.contains(np.zeros(4, dtype=np.int64))
    assert not space.contains(np.array([2, 2, 1, 0]))  # sum 5 > b
    assert not space.contains(np.array([3, 0, 0, 0]))  # over r
    assert not space.contains(np.array([1, 1, 1]))  # shape
    assert not space.contains(np.array([-1, 1, 0, 0]))


def test_unconstrained_draws_mostly_leave_the_set() -> None:
    # The motivation for invalid_action="project": n=10, r=2, b=4.
    space = BatchPulls(10, batch_size=4, repeat_limit=2, seed=0)
    raw = np.random.default_rng(0).integers(0, 3, size=(2000, 10))
    inside = np.mean([space.contains(x) for x in raw])
    assert inside < 0.05


def test_sample_limit_and_answer_mode() -> None:
    space = BatchPulls(6, batch_size=5, repeat_limit=5, seed=1)
    space.sample_limit = 2
    assert all(space.sample().sum() <= 2 for _ in range(50))
    space.answer_k = 3
    for _ in range(20):
        x = space.sample()
        assert x.sum() == 3 and set(np.unique(x)) <= {0, 1}


def test_unbounded_batch_size() -> None:
    space = BatchPulls(3, batch_size=None, repeat_limit=7, seed=2)
    assert space.max_pulls == 21
    assert space.contains(np.array([7, 7, 7]))


def test_seeding_equality_repr_and_json() -> None:
    a, b = BatchPulls(5, 4, 2, seed=3), BatchPulls(5, 4, 2, seed=3)
    assert all(np.array_equal(a.sample(), b.sample()) for _ in range(10))
    assert a == b and a != BatchPulls(5, 3, 2) and a != BatchPulls(5, 4, 1)
    assert repr(a) == "BatchPulls(n_arms=5, batch_size=4, repeat_limit=2)"
    x = [a.sample(), a.sample()]
    back = a.from_jsonable(a.to_jsonable(x))
    assert all(np.array_equal(u, v) for u, v in zip(x, back, strict=True))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="repeat_limit=3 must not exceed batch_size=2"):
        BatchPulls(4, 2, 3)
    with pytest.raises(ValueError, match="repeat_limit=0"):
        BatchPulls(4, 2, 0)
    with pytest.raises(NotImplementedError):
        BatchPulls(4, 2, 1).sample(mask=(np.ones(2, np.int8),) * 4)
